package rbac

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/setpoint-dev/setpoint/internal/authorizer"
	rbacauthz "github.com/setpoint-dev/setpoint/internal/authorizer/rbac"
	"github.com/setpoint-dev/setpoint/internal/registry"
)

// Escalation prevention, as kube-apiserver's RBAC storage does it: nobody
// grants what they do not hold. A write without a user (the server's own)
// or by a member of system:masters passes. Otherwise:
//
//   - a Role or ClusterRole passes when the user may "escalate" roles or
//     clusterroles (in the namespace, for that name), else only when the
//     rules the user holds cover every rule written; a ClusterRole with an
//     aggregationRule (before or after) needs rules covering everything;
//   - a RoleBinding or ClusterRoleBinding passes when the user may "bind"
//     the role it refers to (that name, in the binding's namespace), else
//     only when the user holds every rule of that role;
//   - an update that changes nothing but ownerReferences and finalizers
//     passes (the garbage collector's writes).

// fullAuthority is what cluster-admin holds.
var fullAuthority = []rbacv1.PolicyRule{
	{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}},
	{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}},
}

func admitRole(ctx context.Context, env registry.Env, a *registry.Attributes) (*registry.Txn, error) {
	r, ok := a.Object.(*rbacv1.Role)
	if !ok || escalationAllowed(a.User) || onlyGCFields(a) || mayEscalate(ctx, env, a, "roles") {
		return nil, nil
	}
	return nil, confirmNoEscalation(ctx, env, a, "roles", r.Name, r.Rules)
}

func admitClusterRole(ctx context.Context, env registry.Env, a *registry.Attributes) (*registry.Txn, error) {
	r, ok := a.Object.(*rbacv1.ClusterRole)
	if !ok || escalationAllowed(a.User) || onlyGCFields(a) || mayEscalate(ctx, env, a, "clusterroles") {
		return nil, nil
	}
	if err := confirmNoEscalation(ctx, env, a, "clusterroles", r.Name, r.Rules); err != nil {
		return nil, err
	}
	old, _ := a.Old.(*rbacv1.ClusterRole)
	if r.AggregationRule != nil || (old != nil && old.AggregationRule != nil) {
		if confirmNoEscalation(ctx, env, a, "clusterroles", r.Name, fullAuthority) != nil {
			return nil, apierrors.NewForbidden(groupResource("clusterroles"), r.Name,
				errors.New("must have cluster-admin privileges to use the aggregationRule"))
		}
	}
	return nil, nil
}

func admitRoleBinding(ctx context.Context, env registry.Env, a *registry.Attributes) (*registry.Txn, error) {
	b, ok := a.Object.(*rbacv1.RoleBinding)
	if !ok {
		return nil, nil
	}
	return nil, confirmBinding(ctx, env, a, "rolebindings", b.Name, b.RoleRef)
}

func admitClusterRoleBinding(ctx context.Context, env registry.Env, a *registry.Attributes) (*registry.Txn, error) {
	b, ok := a.Object.(*rbacv1.ClusterRoleBinding)
	if !ok {
		return nil, nil
	}
	return nil, confirmBinding(ctx, env, a, "clusterrolebindings", b.Name, b.RoleRef)
}

func confirmBinding(ctx context.Context, env registry.Env, a *registry.Attributes, resource, name string, ref rbacv1.RoleRef) error {
	if escalationAllowed(a.User) || onlyGCFields(a) || mayBind(ctx, env, a, ref) {
		return nil
	}
	resolver, err := rulesResolver(ctx, env, a.Namespace, resource)
	if err != nil {
		return err
	}
	rules, err := resolver.RoleRefRules(ctx, ref, a.Namespace)
	if err != nil {
		return err
	}
	return checkCovered(ctx, resolver, a, resource, name, rules)
}

// escalationAllowed: the server's own writes (no user) and system:masters.
func escalationAllowed(u registry.UserInfo) bool {
	return u.Name == "" || slices.Contains(u.Groups, authorizer.SystemMasters)
}

// mayEscalate asks the authorizer whether the user may "escalate" the
// role resource the request addresses.
func mayEscalate(ctx context.Context, env registry.Env, a *registry.Attributes, resource string) bool {
	return allowed(ctx, env, authorizer.Attributes{User: a.User.AuthorizerUser(), Verb: "escalate", ResourceRequest: true,
		APIGroup: group, APIVersion: "*", Resource: resource, Namespace: a.Namespace, Name: a.Name})
}

// mayBind asks whether the user may "bind" the role ref names, in the
// binding's namespace ("" for a ClusterRoleBinding).
func mayBind(ctx context.Context, env registry.Env, a *registry.Attributes, ref rbacv1.RoleRef) bool {
	attrs := authorizer.Attributes{User: a.User.AuthorizerUser(), Verb: "bind", ResourceRequest: true,
		APIGroup: ref.APIGroup, Namespace: a.Namespace, Name: ref.Name}
	switch ref.Kind {
	case "ClusterRole":
		attrs.Resource = "clusterroles"
	case "Role":
		attrs.Resource = "roles"
	default:
		return false
	}
	return allowed(ctx, env, attrs)
}

func allowed(ctx context.Context, env registry.Env, attrs authorizer.Attributes) bool {
	d, _, _ := env.Authorizer().Authorize(ctx, attrs)
	return d == authorizer.DecisionAllow
}

func confirmNoEscalation(ctx context.Context, env registry.Env, a *registry.Attributes, resource, name string, rules []rbacv1.PolicyRule) error {
	resolver, err := rulesResolver(ctx, env, a.Namespace, resource)
	if err != nil {
		return err
	}
	return checkCovered(ctx, resolver, a, resource, name, rules)
}

// checkCovered refuses the write unless the rules the user holds in the
// request's namespace cover rules, in kube-apiserver's words.
func checkCovered(ctx context.Context, resolver *rbacauthz.Authorizer, a *registry.Attributes, resource, name string, rules []rbacv1.PolicyRule) error {
	owned, resolveErr := resolver.Rules(ctx, a.User.AuthorizerUser(), a.Namespace)
	covered, missing := rbacauthz.Covers(owned, rules)
	if covered {
		return nil
	}
	var lines []string
	for _, r := range rbacauthz.Compact(missing) {
		if s := rbacauthz.CompactString(r); !slices.Contains(lines, s) {
			lines = append(lines, s)
		}
	}
	slices.Sort(lines)
	msg := fmt.Sprintf("user %q (groups=%q) is attempting to grant RBAC permissions not currently held:\n%s",
		a.User.Name, a.User.Groups, strings.Join(lines, "\n"))
	if resolveErr != nil {
		msg += fmt.Sprintf("; resolution errors: %v", unwrapAll(resolveErr))
	}
	return apierrors.NewForbidden(groupResource(resource), name, errors.New(msg))
}

// unwrapAll lists the errors of an aggregate, as kube prints its slice.
func unwrapAll(err error) []error {
	if m, ok := err.(interface{ Unwrap() []error }); ok {
		return m.Unwrap()
	}
	return []error{err}
}

func groupResource(resource string) schema.GroupResource {
	return schema.GroupResource{Group: group, Resource: resource}
}

// rulesResolver reads the RBAC objects that can grant anything in
// namespace (every ClusterRole and ClusterRoleBinding, the namespace's
// Roles and RoleBindings) consistently, and resolves over them. A role a
// binding names but that does not exist is reported, as kube-apiserver's
// registry does, as a NotFound of the resource being written.
func rulesResolver(ctx context.Context, env registry.Env, namespace, writing string) (*rbacauthz.Authorizer, error) {
	var objs []runtime.Object
	for _, r := range []struct {
		resource   string
		namespaced bool
	}{{"clusterroles", false}, {"clusterrolebindings", false}, {"roles", true}, {"rolebindings", true}} {
		if r.namespaced && namespace == "" {
			continue
		}
		o := env.Objects(rbacv1.SchemeGroupVersion.WithResource(r.resource))
		if o == nil {
			continue
		}
		ns := ""
		if r.namespaced {
			ns = namespace
		}
		list, err := o.List(ctx, ns, nil, nil)
		if err != nil {
			return nil, err
		}
		objs = append(objs, list...)
	}
	res, err := rbacauthz.Static(objs)
	if err != nil {
		return nil, err
	}
	res.NotFoundAs(groupResource(writing))
	return res, nil
}

// onlyGCFields reports an update that changes nothing but what the garbage
// collector writes (ownerReferences, finalizers).
func onlyGCFields(a *registry.Attributes) bool {
	if a.Old == nil || reflect.TypeOf(a.Object) != reflect.TypeOf(a.Old) {
		return false
	}
	cp := a.Object.DeepCopyObject()
	m, err1 := meta.Accessor(cp)
	old, err2 := meta.Accessor(a.Old)
	if err1 != nil || err2 != nil {
		return false
	}
	m.SetOwnerReferences(old.GetOwnerReferences())
	m.SetFinalizers(old.GetFinalizers())
	m.SetManagedFields(old.GetManagedFields())
	m.SetResourceVersion(old.GetResourceVersion())
	m.SetGeneration(old.GetGeneration())
	return reflect.DeepEqual(cp, a.Old)
}
