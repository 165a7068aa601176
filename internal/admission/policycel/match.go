package policycel

import (
	"context"
	"fmt"
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// Exempt reports whether a writes one of the admission policy resources,
// which kube-apiserver's policies never see (a policy cannot lock itself
// in).
func Exempt(a *registry.Attributes) bool {
	if a.Resource == nil || a.Resource.Group != admissionregistrationv1.GroupName {
		return false
	}
	switch a.Resource.Resource {
	case "validatingadmissionpolicies", "validatingadmissionpolicybindings",
		"mutatingadmissionpolicies", "mutatingadmissionpolicybindings":
		return true
	}
	return false
}

var namespacesGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// Namespace reads a namespace from the server's watch cache (the server's
// store when the cache does not hold it yet).
func Namespace(ctx context.Context, env registry.Env, name string) (*corev1.Namespace, error) {
	objs := env.Objects(namespacesGVR)
	if objs == nil {
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, name)
	}
	obj, err := registry.GetCached(ctx, objs, "", name)
	if err != nil {
		return nil, err
	}
	ns, ok := obj.(*corev1.Namespace)
	if !ok {
		return nil, apierrors.NewInternalError(nil)
	}
	return ns, nil
}

// Matches decides whether a matches m, as kube-apiserver's policy
// matcher: namespaceSelector, objectSelector, excludeResourceRules, then
// resourceRules (none: every resource). It returns the resource and kind
// matched. A selector error counts only when the rules match.
func Matches(ctx context.Context, env registry.Env, a *registry.Attributes, m *admissionregistrationv1.MatchResources) (bool, schema.GroupVersionResource, schema.GroupVersionKind, error) {
	none := schema.GroupVersionResource{}
	nsMatch, nsErr := matchNamespace(ctx, env, a, m.NamespaceSelector)
	if !nsMatch && nsErr == nil {
		return false, none, schema.GroupVersionKind{}, nil
	}
	objMatch, objErr := matchObject(a, m.ObjectSelector)
	if !objMatch && objErr == nil {
		return false, none, schema.GroupVersionKind{}, nil
	}
	equivalent := m.MatchPolicy == nil || *m.MatchPolicy == admissionregistrationv1.Equivalent
	if excluded, _ := matchRulesOrEquivalent(env, m.ExcludeResourceRules, a, equivalent); excluded {
		return false, none, schema.GroupVersionKind{}, nil
	}
	matched := a
	if len(m.ResourceRules) > 0 {
		var ok bool
		if ok, matched = matchRulesOrEquivalent(env, m.ResourceRules, a, equivalent); !ok {
			return false, none, schema.GroupVersionKind{}, nil
		}
	}
	if nsErr != nil {
		return false, none, schema.GroupVersionKind{}, nsErr
	}
	if objErr != nil {
		return false, none, schema.GroupVersionKind{}, objErr
	}
	return true, RequestGVR(matched), RequestGVK(matched), nil
}

// matchRulesOrEquivalent is matchRules, then, under matchPolicy
// Equivalent, the rules tried in order against the resources equivalent
// to a's (registry.EquivalentResolver), as kube-apiserver's policy
// matcher. It returns a, or a copy of a naming the equivalent resource
// matched (its objects unconverted: see Versioned).
func matchRulesOrEquivalent(env registry.Env, rules []admissionregistrationv1.NamedRuleWithOperations, a *registry.Attributes, equivalent bool) (bool, *registry.Attributes) {
	if matchRules(rules, a) {
		return true, a
	}
	er, ok := env.(registry.EquivalentResolver)
	if !equivalent || !ok || a.Resource == nil || len(rules) == 0 {
		return false, nil
	}
	eqs := er.EquivalentResources(a.Resource, a.Subresource)
	for i := range rules {
		for _, eq := range eqs {
			c := *a
			c.Resource = eq
			if matchRules(rules[i:i+1], &c) {
				return true, &c
			}
		}
	}
	return false, nil
}

// Versioned is a seen as gvr's resource, which Matches matched: a itself
// when gvr is a's own resource, else a copy for the equivalent resource
// with its objects converted to that version (registry.Attributes.As), as
// kube-apiserver evaluates a policy against the version it matched.
func Versioned(ctx context.Context, env registry.Env, a *registry.Attributes, gvr schema.GroupVersionResource) (*registry.Attributes, error) {
	if a.Resource == nil || gvr == RequestGVR(a) {
		return a, nil
	}
	eq := registry.Equivalent(env, a.Resource, a.Subresource, gvr)
	if eq == nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("unable to convert to %v: unknown kind", gvr))
	}
	out, err := a.As(ctx, eq)
	if err != nil {
		if _, ok := err.(apierrors.APIStatus); ok {
			return nil, err
		}
		return nil, apierrors.NewInternalError(err)
	}
	return out, nil
}

// matchNamespace applies a namespace selector: cluster-scoped objects
// other than namespaces always match; a namespace matches by its own
// labels; a missing namespace is a 404, as in kube-apiserver.
func matchNamespace(ctx context.Context, env registry.Env, a *registry.Attributes, sel *metav1.LabelSelector) (bool, error) {
	isNamespace := a.Resource != nil && a.Resource.Group == "" && a.Resource.Resource == "namespaces"
	if a.Namespace == "" && !isNamespace {
		return true, nil
	}
	if sel == nil {
		return true, nil
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return false, apierrors.NewInternalError(err)
	}
	if s.Empty() {
		return true, nil
	}
	if isNamespace && a.Subresource == "" {
		obj := a.Object
		if obj == nil {
			obj = a.Old
		}
		return s.Matches(labels.Set(objectLabels(obj))), nil
	}
	name := a.Namespace
	if isNamespace {
		name = a.Name
	}
	ns, err := Namespace(ctx, env, name)
	if apierrors.IsNotFound(err) {
		return false, err
	}
	if err != nil {
		return false, apierrors.NewInternalError(err)
	}
	return s.Matches(labels.Set(ns.Labels)), nil
}

func objectLabels(obj runtime.Object) map[string]string {
	if obj == nil {
		return nil
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil
	}
	return m.GetLabels()
}

// matchObject applies an object selector to the new or the old object.
func matchObject(a *registry.Attributes, sel *metav1.LabelSelector) (bool, error) {
	if sel == nil {
		return true, nil
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return false, apierrors.NewInternalError(err)
	}
	if s.Empty() {
		return true, nil
	}
	for _, obj := range []runtime.Object{a.Object, a.Old} {
		if obj != nil && s.Matches(labels.Set(objectLabels(obj))) {
			return true, nil
		}
	}
	return false, nil
}

// matchRules reports whether a matches one of rules (and its resource
// names, when it names some).
func matchRules(rules []admissionregistrationv1.NamedRuleWithOperations, a *registry.Attributes) bool {
	for _, r := range rules {
		if !MatchRule(r.RuleWithOperations, a) {
			continue
		}
		if len(r.ResourceNames) == 0 || slices.Contains(r.ResourceNames, a.Name) {
			return true
		}
	}
	return false
}

// MatchRule reports whether a matches one rule: operations, group,
// version, resource/subresource ("*", "*/*", "pods/*", "*/status") and
// scope, as kube-apiserver's rule matcher.
func MatchRule(r admissionregistrationv1.RuleWithOperations, a *registry.Attributes) bool {
	gvr := RequestGVR(a)
	return matchScope(r.Scope, a) && matchOperation(r.Operations, a.Operation) &&
		exactOrWildcard(r.APIGroups, gvr.Group) && exactOrWildcard(r.APIVersions, gvr.Version) &&
		matchResource(r.Resources, gvr.Resource, a.Subresource)
}

func matchScope(scope *admissionregistrationv1.ScopeType, a *registry.Attributes) bool {
	if scope == nil || *scope == admissionregistrationv1.AllScopes {
		return true
	}
	gvr := RequestGVR(a)
	isNamespace := gvr.Group == "" && gvr.Resource == "namespaces"
	switch *scope {
	case admissionregistrationv1.NamespacedScope:
		return !isNamespace && a.Namespace != ""
	case admissionregistrationv1.ClusterScope:
		return isNamespace || a.Namespace == ""
	}
	return false
}

func matchOperation(ops []admissionregistrationv1.OperationType, op registry.Operation) bool {
	for _, o := range ops {
		if o == admissionregistrationv1.OperationAll || string(o) == string(op) {
			return true
		}
	}
	return false
}

func exactOrWildcard(items []string, v string) bool {
	for _, i := range items {
		if i == "*" || i == v {
			return true
		}
	}
	return false
}

func matchResource(resources []string, res, sub string) bool {
	for _, r := range resources {
		rr, rs, _ := strings.Cut(r, "/")
		if (rr == "*" || rr == res) && (rs == "*" || rs == sub) {
			return true
		}
	}
	return false
}
