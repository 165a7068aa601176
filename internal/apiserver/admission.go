package apiserver

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/setpoint-dev/setpoint/internal/admission/resourcequota"
	"github.com/setpoint-dev/setpoint/internal/registry"
)

// admitter returns the mutating admission chain of one resource's writes:
// the server's own admission (namespace lifecycle) for every kind, then the
// kind's (registry.Resource.Admit).
func (s *Server) admitter(res *registry.Resource) func(ctx context.Context, a *registry.Attributes) (*registry.Txn, error) {
	env := s.env()
	return func(ctx context.Context, a *registry.Attributes) (*registry.Txn, error) {
		if err := s.admitNamespaceLifecycle(ctx, res, a); err != nil {
			return nil, err
		}
		if res.Admit == nil || a.Operation == registry.Delete {
			return nil, nil
		}
		return res.Admit(ctx, env, a)
	}
}

// validator returns the validating admission chain of one resource's
// creates and updates, which runs after the strategy's validation: the
// kind's (registry.Resource.AdmitValidate), then ResourceQuota's, last as
// in kube-apiserver.
func (s *Server) validator(res *registry.Resource) func(ctx context.Context, a *registry.Attributes) (*registry.Txn, error) {
	env := s.env()
	return func(ctx context.Context, a *registry.Attributes) (*registry.Txn, error) {
		var kind *registry.Txn
		if res.AdmitValidate != nil {
			t, err := res.AdmitValidate(ctx, env, a)
			if err != nil {
				return nil, err
			}
			kind = t
		}
		q, err := resourcequota.Admit(ctx, env, res, a)
		if err != nil {
			kind.Finish(false)
			return nil, err
		}
		return joinTxns(kind, q), nil
	}
}

// joinTxns is a Txn finishing a, then b (nil when both are).
func joinTxns(a, b *registry.Txn) *registry.Txn {
	if a == nil || b == nil {
		if a == nil {
			return b
		}
		return a
	}
	return &registry.Txn{
		Commit: func() { a.Finish(true); b.Finish(true) },
		Revert: func() { a.Finish(false); b.Finish(false) },
	}
}

// immortalNamespaces cannot be deleted, as in Kubernetes.
var immortalNamespaces = map[string]bool{"default": true, "kube-system": true, "kube-public": true}

var namespacesGVR = corev1.SchemeGroupVersion.WithResource("namespaces")

// admitNamespaceLifecycle is Kubernetes' NamespaceLifecycle admission: no
// deleting the system namespaces (403), no creating namespaced objects in a
// namespace that does not exist (404) or is terminating (403, cause
// NamespaceTerminating).
func (s *Server) admitNamespaceLifecycle(ctx context.Context, res *registry.Resource, a *registry.Attributes) error {
	if a.Operation == registry.Delete && res.Group == "" && res.Resource == "namespaces" && immortalNamespaces[a.Name] {
		return apierrors.NewForbidden(schema.GroupResource{Resource: "namespaces"}, a.Name, fmt.Errorf("this namespace may not be deleted"))
	}
	if a.Operation != registry.Create || !res.Namespaced {
		return nil
	}
	ns, err := s.namespace(ctx, a.Namespace)
	if err != nil {
		return err
	}
	if ns.DeletionTimestamp != nil || ns.Status.Phase == corev1.NamespaceTerminating {
		e := apierrors.NewForbidden(schema.GroupResource{Group: res.Group, Resource: res.Resource}, a.Name,
			fmt.Errorf("unable to create new content in namespace %s because it is being terminated", a.Namespace))
		e.ErrStatus.Details.Causes = append(e.ErrStatus.Details.Causes, metav1.StatusCause{
			Type: corev1.NamespaceTerminatingCause, Message: fmt.Sprintf("namespace %s is being terminated", a.Namespace), Field: "metadata.namespace",
		})
		return e
	}
	return nil
}

// namespace returns a namespace from the watch cache, or from storage when
// the cache lags one created a moment ago (404 when it does not exist).
func (s *Server) namespace(ctx context.Context, name string) (*corev1.Namespace, error) {
	nsEntry := s.entry(namespacesGVR)
	cached, ok, _, err := nsEntry.cache.Get(nsEntry.res.Key("", name))
	if err != nil || !ok {
		live, gerr := nsEntry.store.Get(ctx, "", name)
		if gerr != nil {
			if apierrors.IsNotFound(gerr) {
				return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, name)
			}
			return nil, gerr
		}
		cached = live
	}
	return cached.(*corev1.Namespace), nil
}
