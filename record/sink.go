package record

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/setpoint-dev/setpoint/rest"
)

// Sink stores events. Errors that are *apierrors.StatusError are the
// server's verdict and are not retried; any other error (transport,
// timeout) is retried by the broadcaster.
type Sink interface {
	// Create stores a new event in ev.Namespace and returns it as stored.
	// A name already taken is an error for which apierrors.IsAlreadyExists
	// holds.
	Create(ctx context.Context, ev *corev1.Event) (*corev1.Event, error)
	// Patch applies a strategic merge patch to the stored event named by
	// ev.Namespace/ev.Name and returns the result. A missing event (expired
	// by the server's TTL, or deleted) is an error for which
	// apierrors.IsNotFound holds; the broadcaster then creates it anew.
	Patch(ctx context.Context, ev *corev1.Event, data []byte) (*corev1.Event, error)
}

// RESTSink writes core/v1 Events through a setpoint REST client.
type RESTSink struct {
	events *rest.Resource[*corev1.Event, *corev1.EventList]
}

// NewRESTSink returns a Sink writing to the API server behind c.
func NewRESTSink(c *rest.Client) *RESTSink {
	return &RESTSink{events: rest.For[*corev1.Event, *corev1.EventList](c, corev1.SchemeGroupVersion.WithResource("events"), true)}
}

// Create implements Sink.
func (s *RESTSink) Create(ctx context.Context, ev *corev1.Event) (*corev1.Event, error) {
	out, err := s.events.Namespace(ev.Namespace).Create(ctx, ev, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("create event %s/%s: %w", ev.Namespace, ev.Name, err)
	}
	return out, nil
}

// Patch implements Sink.
func (s *RESTSink) Patch(ctx context.Context, ev *corev1.Event, data []byte) (*corev1.Event, error) {
	out, err := s.events.Namespace(ev.Namespace).Patch(ctx, ev.Name, types.StrategicMergePatchType, data, metav1.PatchOptions{})
	if err != nil {
		return nil, fmt.Errorf("patch event %s/%s: %w", ev.Namespace, ev.Name, err)
	}
	return out, nil
}
