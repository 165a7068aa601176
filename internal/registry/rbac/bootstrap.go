package rbac

import (
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/setpoint-dev/setpoint/internal/rbacpolicy"
	"github.com/setpoint-dev/setpoint/internal/registry"
)

// withDefaultPolicy gives the four resources kube-apiserver's default
// policy (package rbacpolicy) as their Bootstrap objects, reconciled at
// every start as the rbac/bootstrap-roles post-start hook does.
func withDefaultPolicy(resources []*registry.Resource) []*registry.Resource {
	for _, r := range resources {
		switch r.Resource {
		case "clusterroles":
			r.Bootstrap = func() []runtime.Object { return objectsOf(rbacpolicy.Default().ClusterRoles) }
			r.Reconcile = typedReconcile(func(s, w *rbacv1.ClusterRole) bool {
				rbacpolicy.ReconcileClusterRole(s, w)
				return false
			})
		case "clusterrolebindings":
			r.Bootstrap = func() []runtime.Object { return objectsOf(rbacpolicy.Default().ClusterRoleBindings) }
			r.Reconcile = typedReconcile(rbacpolicy.ReconcileClusterRoleBinding)
		case "roles":
			r.Bootstrap = func() []runtime.Object { return objectsOf(rbacpolicy.Default().Roles) }
			r.Reconcile = typedReconcile(func(s, w *rbacv1.Role) bool {
				rbacpolicy.ReconcileRole(s, w)
				return false
			})
		case "rolebindings":
			r.Bootstrap = func() []runtime.Object { return objectsOf(rbacpolicy.Default().RoleBindings) }
			r.Reconcile = typedReconcile(rbacpolicy.ReconcileRoleBinding)
		}
	}
	return resources
}

// objectsOf returns pointers to the items as runtime objects.
func objectsOf[T any, P interface {
	*T
	runtime.Object
}](items []T) []runtime.Object {
	out := make([]runtime.Object, len(items))
	for i := range items {
		out[i] = P(&items[i])
	}
	return out
}

// typedReconcile adapts a reconciliation of one kind to
// registry.Resource.Reconcile.
func typedReconcile[T runtime.Object](fn func(stored, want T) bool) func(stored, want runtime.Object) bool {
	return func(stored, want runtime.Object) bool {
		s, ok1 := stored.(T)
		w, ok2 := want.(T)
		return ok1 && ok2 && fn(s, w)
	}
}
