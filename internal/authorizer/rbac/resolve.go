package rbac

import (
	"fmt"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/setpoint-dev/setpoint/internal/authorizer"
)

// ruleSet is the rules one binding grants one user, and the reason of a
// decision they allow, as Kubernetes words it ("RBAC: allowed by
// <binding>").
type ruleSet struct {
	allowed string
	rules   []rbacv1.PolicyRule
}

// resolved is what a user holds in a namespace: the rule sets of the
// ClusterRoleBindings, then of the namespace's RoleBindings, and the
// errors met resolving them (a binding whose role is missing).
type resolved struct {
	sets []ruleSet
	errs []error
}

// cacheKey identifies a user (name and groups) in a namespace.
func cacheKey(u *authorizer.User, namespace string) string {
	n := len(u.Name) + len(namespace) + 2
	for _, g := range u.Groups {
		n += len(g) + 1
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteString(namespace)
	b.WriteByte(0)
	b.WriteString(u.Name)
	for _, g := range u.Groups {
		b.WriteByte(0)
		b.WriteString(g)
	}
	return b.String()
}

// rulesFor returns what u holds in namespace, from the cache when it can.
func (s *snapshot) rulesFor(u *authorizer.User, namespace string) *resolved {
	key := cacheKey(u, namespace)
	if r, ok := s.resolved.Load(key); ok {
		return r.(*resolved)
	}
	r := s.resolve(u, namespace)
	if s.resolvedLen.Load() < maxResolved {
		if _, loaded := s.resolved.LoadOrStore(key, r); !loaded {
			s.resolvedLen.Add(1)
		}
	}
	return r
}

// resolve visits the bindings that name u as Kubernetes' rule resolver
// does: every ClusterRoleBinding, then, for a namespace, its
// RoleBindings; each in name order, with the first subject that names u.
func (s *snapshot) resolve(u *authorizer.User, namespace string) *resolved {
	r := &resolved{}
	for _, b := range s.clusterBindingsOf(u) {
		i, _ := appliesTo(u, b.Subjects, "")
		rules, err := s.roleRefRules(b.RoleRef, "")
		if err != nil {
			r.errs = append(r.errs, err)
			continue
		}
		src := fmt.Sprintf("ClusterRoleBinding %q of %s %q to %s", b.Name, b.RoleRef.Kind, b.RoleRef.Name, describeSubject(&b.Subjects[i], ""))
		r.sets = append(r.sets, ruleSet{allowed: "RBAC: allowed by " + src, rules: rules})
	}
	if namespace == "" {
		return r
	}
	for _, b := range s.namespaceBindingsOf(u, namespace) {
		i, _ := appliesTo(u, b.Subjects, namespace)
		rules, err := s.roleRefRules(b.RoleRef, namespace)
		if err != nil {
			r.errs = append(r.errs, err)
			continue
		}
		src := fmt.Sprintf("RoleBinding %q of %s %q to %s", b.Name+"/"+b.Namespace, b.RoleRef.Kind, b.RoleRef.Name,
			describeSubject(&b.Subjects[i], b.Namespace))
		r.sets = append(r.sets, ruleSet{allowed: "RBAC: allowed by " + src, rules: rules})
	}
	return r
}

func (s *snapshot) clusterBindingsOf(u *authorizer.User) []*rbacv1.ClusterRoleBinding {
	var out []*rbacv1.ClusterRoleBinding
	out = append(out, s.clusterBy[subjectKey{userSubject, u.Name}]...)
	for _, g := range u.Groups {
		out = append(out, s.clusterBy[subjectKey{groupSubject, g}]...)
	}
	return sortedUnique(out, func(b *rbacv1.ClusterRoleBinding) string { return b.Name })
}

func (s *snapshot) namespaceBindingsOf(u *authorizer.User, namespace string) []*rbacv1.RoleBinding {
	var out []*rbacv1.RoleBinding
	out = append(out, s.namespaceBy[nsSubjectKey{namespace, subjectKey{userSubject, u.Name}}]...)
	for _, g := range u.Groups {
		out = append(out, s.namespaceBy[nsSubjectKey{namespace, subjectKey{groupSubject, g}}]...)
	}
	return sortedUnique(out, func(b *rbacv1.RoleBinding) string { return b.Name })
}

func sortedUnique[T any](list []*T, name func(*T) string) []*T {
	slices.SortFunc(list, func(a, b *T) int { return strings.Compare(name(a), name(b)) })
	return slices.Compact(list)
}

// roleRefRules returns the rules of the role a binding in
// bindingNamespace ("" for a ClusterRoleBinding) refers to, or the error
// Kubernetes' listers give for a missing one.
func (s *snapshot) roleRefRules(ref rbacv1.RoleRef, bindingNamespace string) ([]rbacv1.PolicyRule, error) {
	switch ref.Kind {
	case "Role":
		if r, ok := s.roles[nsName{bindingNamespace, ref.Name}]; ok {
			return r.Rules, nil
		}
		return nil, s.missing("role", ref.Name)
	case "ClusterRole":
		if r, ok := s.clusterRoles[ref.Name]; ok {
			return r.Rules, nil
		}
		return nil, s.missing("clusterrole", ref.Name)
	}
	return nil, fmt.Errorf("unsupported role reference kind: %q", ref.Kind)
}

// missing is the error of a role that does not exist: the informer
// lister's NotFound (resource "role" or "clusterrole"), or the one set by
// NotFoundAs.
func (s *snapshot) missing(resource, name string) error {
	if s.notFound != nil {
		return apierrors.NewNotFound(*s.notFound, name)
	}
	return apierrors.NewNotFound(rbacv1.Resource(resource), name)
}

// appliesTo returns the index of the first subject naming u.
func appliesTo(u *authorizer.User, subjects []rbacv1.Subject, namespace string) (int, bool) {
	for i := range subjects {
		if subjectApplies(u, &subjects[i], namespace) {
			return i, true
		}
	}
	return 0, false
}

func subjectApplies(u *authorizer.User, s *rbacv1.Subject, namespace string) bool {
	switch s.Kind {
	case rbacv1.UserKind:
		return u.Name == s.Name
	case rbacv1.GroupKind:
		return slices.Contains(u.Groups, s.Name)
	case rbacv1.ServiceAccountKind:
		ns := namespace
		if s.Namespace != "" {
			ns = s.Namespace
		}
		return ns != "" && u.Name == serviceAccountUser(ns, s.Name)
	}
	return false
}

// describeSubject words a subject as Kubernetes' reasons do (a service
// account as "name/namespace").
func describeSubject(s *rbacv1.Subject, bindingNamespace string) string {
	if s.Kind == rbacv1.ServiceAccountKind {
		ns := s.Namespace
		if ns == "" {
			ns = bindingNamespace
		}
		return fmt.Sprintf("%s %q", s.Kind, s.Name+"/"+ns)
	}
	return fmt.Sprintf("%s %q", s.Kind, s.Name)
}
