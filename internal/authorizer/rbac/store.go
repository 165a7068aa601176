package rbac

import (
	"fmt"
	"sync"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// The resources the authorizer is fed, as Replace names them.
const (
	Roles               = "roles"
	ClusterRoles        = "clusterroles"
	RoleBindings        = "rolebindings"
	ClusterRoleBindings = "clusterrolebindings"
)

// Resources lists the four resources the authorizer must be fed with.
var Resources = []string{Roles, ClusterRoles, RoleBindings, ClusterRoleBindings}

type nsName struct{ namespace, name string }

// store holds the objects as the feed last described them. Objects are
// shared with the feed and never modified.
type store struct {
	roles               map[nsName]*rbacv1.Role
	clusterRoles        map[string]*rbacv1.ClusterRole
	roleBindings        map[nsName]*rbacv1.RoleBinding
	clusterRoleBindings map[string]*rbacv1.ClusterRoleBinding
}

func newStore() store {
	return store{
		roles:               map[nsName]*rbacv1.Role{},
		clusterRoles:        map[string]*rbacv1.ClusterRole{},
		roleBindings:        map[nsName]*rbacv1.RoleBinding{},
		clusterRoleBindings: map[string]*rbacv1.ClusterRoleBinding{},
	}
}

// put records obj (del false) or forgets it (del true).
func (s *store) put(obj runtime.Object, del bool) error {
	switch o := obj.(type) {
	case *rbacv1.Role:
		setOrDelete(s.roles, nsName{o.Namespace, o.Name}, o, del)
	case *rbacv1.ClusterRole:
		setOrDelete(s.clusterRoles, o.Name, o, del)
	case *rbacv1.RoleBinding:
		setOrDelete(s.roleBindings, nsName{o.Namespace, o.Name}, o, del)
	case *rbacv1.ClusterRoleBinding:
		setOrDelete(s.clusterRoleBindings, o.Name, o, del)
	default:
		return fmt.Errorf("rbac authorizer: unexpected object %T", obj)
	}
	return nil
}

func setOrDelete[K comparable, V any](m map[K]V, k K, v V, del bool) {
	if del {
		delete(m, k)
	} else {
		m[k] = v
	}
}

// clear forgets every object of resource.
func (s *store) clear(resource string) error {
	switch resource {
	case Roles:
		clear(s.roles)
	case ClusterRoles:
		clear(s.clusterRoles)
	case RoleBindings:
		clear(s.roleBindings)
	case ClusterRoleBindings:
		clear(s.clusterRoleBindings)
	default:
		return fmt.Errorf("rbac authorizer: unknown resource %q", resource)
	}
	return nil
}

// syncState tracks which resources have had their first Replace.
type syncState struct {
	once    sync.Once
	done    chan struct{}
	pending map[string]bool
}

func newSyncState() *syncState {
	p := map[string]bool{}
	for _, r := range Resources {
		p[r] = true
	}
	return &syncState{done: make(chan struct{}), pending: p}
}

// replaced notes resource's first full list; the caller holds the
// authorizer's lock.
func (s *syncState) replaced(resource string) {
	delete(s.pending, resource)
	if len(s.pending) == 0 {
		s.once.Do(func() { close(s.done) })
	}
}
