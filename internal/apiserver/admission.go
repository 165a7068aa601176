package apiserver

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// admit is the admission chain run before every create.
func (s *Server) admit(ctx context.Context, res *registry.Resource, obj runtime.Object) (func(), error) {
	if err := s.admitNamespace(ctx, res, objectMeta(obj)); err != nil {
		return nil, err
	}
	if svc, ok := obj.(*corev1.Service); ok {
		return s.services.allocate(ctx, svc)
	}
	return nil, nil
}

// immortalNamespaces cannot be deleted, as in Kubernetes.
var immortalNamespaces = map[string]bool{"default": true, "kube-system": true, "kube-public": true}

// admitNamespace refuses to create namespaced objects in a namespace that
// does not exist (404) or is terminating (403, cause NamespaceTerminating),
// as Kubernetes' NamespaceLifecycle admission does.
func (s *Server) admitNamespace(ctx context.Context, res *registry.Resource, m metav1.Object) error {
	if !res.Namespaced {
		return nil
	}
	name := m.GetNamespace()
	nsEntry := s.entry(corev1.SchemeGroupVersion.WithResource("namespaces"))
	cached, ok, _, err := nsEntry.cache.Get(nsEntry.res.Key("", name))
	if err != nil || !ok {
		// The cache may lag a namespace created a moment ago: ask storage.
		live, gerr := nsEntry.store.Get(ctx, "", name)
		if gerr != nil {
			if apierrors.IsNotFound(gerr) {
				return apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, name)
			}
			return gerr
		}
		cached = live
	}
	ns := cached.(*corev1.Namespace)
	if ns.DeletionTimestamp != nil || ns.Status.Phase == corev1.NamespaceTerminating {
		e := apierrors.NewForbidden(schema.GroupResource{Group: res.Group, Resource: res.Resource}, m.GetName(),
			fmt.Errorf("unable to create new content in namespace %s because it is being terminated", name))
		e.ErrStatus.Details.Causes = append(e.ErrStatus.Details.Causes, metav1.StatusCause{
			Type: corev1.NamespaceTerminatingCause, Message: fmt.Sprintf("namespace %s is being terminated", name), Field: "metadata.namespace",
		})
		return e
	}
	return nil
}
