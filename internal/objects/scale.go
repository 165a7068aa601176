package objects

import (
	"context"
	"fmt"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// ScaleGVK is the kind of every scale subresource's objects.
var ScaleGVK = autoscalingv1.SchemeGroupVersion.WithKind("Scale")

// ScaleOf renders the autoscaling/v1 Scale view of obj, an object of res,
// which has a scale subresource: its name, namespace, uid,
// resourceVersion and creationTimestamp, spec.replicas, status.replicas
// and the status selector.
func ScaleOf(res *registry.Resource, obj runtime.Object) (*autoscalingv1.Scale, error) {
	spec, status, selector, err := res.Scale.Replicas(obj)
	if err != nil {
		return nil, fmt.Errorf("scale of %s: %w", res.GVR(), err)
	}
	m := accessor(obj)
	sc := &autoscalingv1.Scale{
		ObjectMeta: metav1.ObjectMeta{
			Name: m.GetName(), Namespace: m.GetNamespace(), UID: m.GetUID(),
			ResourceVersion: m.GetResourceVersion(), CreationTimestamp: m.GetCreationTimestamp(),
		},
		Spec:   autoscalingv1.ScaleSpec{Replicas: spec},
		Status: autoscalingv1.ScaleStatus{Replicas: status, Selector: selector},
	}
	sc.SetGroupVersionKind(ScaleGVK)
	return sc, nil
}

// admitScale runs admission on a write through the scale subresource as
// kube-apiserver does: the plugins and webhooks see Scale objects (the
// views of the new and the current object), not the object itself, with
// subresource "scale"; a replica count a mutating admission set on the
// Scale is carried back to obj.
func (s *Store) admitScale(ctx context.Context, admit AdmitFunc, a *registry.Attributes) (*registry.Txn, error) {
	obj := a.Object
	view, err := ScaleOf(s.res, obj)
	if err != nil {
		return nil, apiError(err)
	}
	old, err := ScaleOf(s.res, a.Old)
	if err != nil {
		return nil, apiError(err)
	}
	a.Object, a.Old = view, old
	txn, err := admit(ctx, a)
	if err != nil {
		return txn, err
	}
	// A webhook changes the Scale in place; an admission policy may put
	// a new one in its place.
	admitted, ok := a.Object.(*autoscalingv1.Scale)
	if !ok {
		txn.Finish(false)
		return nil, apierrors.NewInternalError(fmt.Errorf("admission of %s/scale returned a %T, not a Scale", s.res.GVR(), a.Object))
	}
	if err := s.res.Scale.SetReplicas(obj, admitted.Spec.Replicas); err != nil {
		txn.Finish(false)
		return nil, apiError(fmt.Errorf("scale of %s: %w", s.res.GVR(), err))
	}
	return txn, nil
}
