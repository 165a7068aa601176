package record

import (
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Recorder records events about objects on behalf of one source. Calls
// never block on the network: the event is queued and written by the
// broadcaster; an event that cannot be queued, or whose object has no
// known kind or no name, is dropped and logged. Safe for concurrent use.
type Recorder interface {
	// Event records an event of type eventtype (corev1.EventTypeNormal or
	// corev1.EventTypeWarning; any other is dropped) about object. reason is
	// a short UpperCamelCase machine-readable word; message is for humans.
	Event(object runtime.Object, eventtype, reason, message string)
	// Eventf is Event with a fmt.Sprintf message.
	Eventf(object runtime.Object, eventtype, reason, messageFmt string, args ...any)
	// AnnotatedEventf is Eventf that also sets annotations on the Event
	// object itself. Annotations do not take part in deduplication.
	AnnotatedEventf(object runtime.Object, annotations map[string]string, eventtype, reason, messageFmt string, args ...any)
}

// recorder is the Recorder of one source on one broadcaster.
type recorder struct {
	b      *Broadcaster
	source corev1.EventSource
}

func (r *recorder) Event(object runtime.Object, eventtype, reason, message string) {
	r.generate(object, nil, eventtype, reason, message)
}

func (r *recorder) Eventf(object runtime.Object, eventtype, reason, messageFmt string, args ...any) {
	r.generate(object, nil, eventtype, reason, fmt.Sprintf(messageFmt, args...))
}

func (r *recorder) AnnotatedEventf(object runtime.Object, annotations map[string]string, eventtype, reason, messageFmt string, args ...any) {
	r.generate(object, annotations, eventtype, reason, fmt.Sprintf(messageFmt, args...))
}

func (r *recorder) generate(object runtime.Object, annotations map[string]string, eventtype, reason, message string) {
	ref, err := GetReference(r.b.scheme, object)
	if err != nil {
		r.b.log.Error("cannot record event: no reference to the object", "reason", reason, "err", err)
		return
	}
	if eventtype != corev1.EventTypeNormal && eventtype != corev1.EventTypeWarning {
		r.b.log.Error("cannot record event: unsupported type", "type", eventtype, "reason", reason, "object", ref.Name)
		return
	}
	r.b.enqueue(r.makeEvent(ref, annotations, eventtype, reason, message))
}

// makeEvent builds the Event, stamped with the broadcaster's clock. Its name
// is the object's name and a hexadecimal timestamp, unique within the
// broadcaster (see Broadcaster.uniqueNanos).
func (r *recorder) makeEvent(ref *corev1.ObjectReference, annotations map[string]string, eventtype, reason, message string) *corev1.Event {
	now := r.b.clock.Now()
	ns := ref.Namespace
	if ns == "" {
		ns = metav1.NamespaceDefault
	}
	return &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{
			Name:        fmt.Sprintf("%s.%x", ref.Name, r.b.uniqueNanos(now)),
			Namespace:   ns,
			Annotations: maps.Clone(annotations),
		},
		InvolvedObject:      *ref,
		Reason:              reason,
		Message:             message,
		FirstTimestamp:      metav1.NewTime(now),
		LastTimestamp:       metav1.NewTime(now),
		Count:               1,
		Type:                eventtype,
		Source:              r.source,
		ReportingController: r.source.Component,
		ReportingInstance:   r.source.Host,
	}
}
