package rbac

import (
	"maps"
	"sync"
	"sync/atomic"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// subjectKind tells users from groups in the binding index; service
// accounts are indexed as the user name they authenticate as.
type subjectKind uint8

const (
	userSubject subjectKind = iota
	groupSubject
)

type subjectKey struct {
	kind subjectKind
	name string
}

type nsSubjectKey struct {
	namespace string
	subjectKey
}

// snapshot is an immutable view of the objects, with the bindings indexed
// by the subjects they name and a cache of each user's resolved rules per
// namespace. Any change to the objects replaces the snapshot, which drops
// the cache with it.
type snapshot struct {
	roles        map[nsName]*rbacv1.Role
	clusterRoles map[string]*rbacv1.ClusterRole
	clusterBy    map[subjectKey][]*rbacv1.ClusterRoleBinding
	namespaceBy  map[nsSubjectKey][]*rbacv1.RoleBinding
	// notFound, when set, is the resource of missing roles' errors.
	notFound *schema.GroupResource

	// resolved caches *resolved by user and namespace (cacheKey); at most
	// maxResolved entries, beyond which answers are computed each time.
	resolved    sync.Map
	resolvedLen atomic.Int64
}

// maxResolved bounds the resolved-rules cache of one snapshot.
const maxResolved = 8192

func buildSnapshot(s *store) *snapshot {
	snap := &snapshot{
		roles:        maps.Clone(s.roles),
		clusterRoles: maps.Clone(s.clusterRoles),
		clusterBy:    map[subjectKey][]*rbacv1.ClusterRoleBinding{},
		namespaceBy:  map[nsSubjectKey][]*rbacv1.RoleBinding{},
	}
	for _, b := range s.clusterRoleBindings {
		for _, k := range subjectKeys(b.Subjects, "") {
			snap.clusterBy[k] = appendOnce(snap.clusterBy[k], b)
		}
	}
	for _, b := range s.roleBindings {
		for _, k := range subjectKeys(b.Subjects, b.Namespace) {
			nk := nsSubjectKey{b.Namespace, k}
			snap.namespaceBy[nk] = appendOnce(snap.namespaceBy[nk], b)
		}
	}
	return snap
}

// appendOnce appends b unless it is already last (a binding naming one
// subject twice).
func appendOnce[T any](list []*T, b *T) []*T {
	if n := len(list); n > 0 && list[n-1] == b {
		return list
	}
	return append(list, b)
}

// subjectKeys returns the index keys of subjects: users and service
// accounts by user name, groups by group name. A service account without
// a namespace takes the binding's (none for a ClusterRoleBinding, where it
// matches nobody); unknown kinds match nobody.
func subjectKeys(subjects []rbacv1.Subject, bindingNamespace string) []subjectKey {
	keys := make([]subjectKey, 0, len(subjects))
	for _, s := range subjects {
		switch s.Kind {
		case rbacv1.UserKind:
			keys = append(keys, subjectKey{userSubject, s.Name})
		case rbacv1.GroupKind:
			keys = append(keys, subjectKey{groupSubject, s.Name})
		case rbacv1.ServiceAccountKind:
			ns := s.Namespace
			if ns == "" {
				ns = bindingNamespace
			}
			if ns != "" {
				keys = append(keys, subjectKey{userSubject, serviceAccountUser(ns, s.Name)})
			}
		}
	}
	return keys
}

func serviceAccountUser(namespace, name string) string {
	return "system:serviceaccount:" + namespace + ":" + name
}
