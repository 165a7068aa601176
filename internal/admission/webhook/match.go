package webhook

import (
	"context"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/setpoint-dev/setpoint/internal/admission/policycel"
	"github.com/setpoint-dev/setpoint/internal/registry"
)

// request is what the matching and the review read of one write.
type request struct {
	a           *registry.Attributes
	gvr         schema.GroupVersionResource
	gvk         schema.GroupVersionKind
	subresource string
	// reqGVR and reqGVK are what the client asked for: gvr and gvk, except
	// in a request seen as an equivalent resource (equivalent.go).
	reqGVR schema.GroupVersionResource
	reqGVK schema.GroupVersionKind
	// base is the request this one is a converted view of, nil for the
	// request itself.
	base *request
	// equivalents caches the resources equivalent to the request's (read
	// once per request, when a hook with matchPolicy Equivalent needs them).
	equivalents     []*registry.Resource
	equivalentsRead bool
	// nsLabels caches the namespace's labels (read once per request).
	nsLabels map[string]string
	nsRead   bool
}

func newRequest(a *registry.Attributes) *request {
	r := &request{a: a, subresource: a.Subresource}
	if a.Resource != nil {
		r.gvr = schema.GroupVersionResource{Group: a.Resource.Group, Version: a.Resource.Version, Resource: a.Resource.Resource}
		r.gvk = schema.GroupVersionKind{Group: a.Resource.Group, Version: a.Resource.Version, Kind: a.Resource.Kind}
		r.gvk = subresourceKind(a.Resource, a.Subresource, r.gvk)
	}
	r.reqGVR, r.reqGVK = r.gvr, r.gvk
	return r
}

// subresourceKind is the kind of a subresource's objects: the parent's
// for status, autoscaling/v1 Scale for scale, the one the kind declares
// for the others.
func subresourceKind(res *registry.Resource, sub string, parent schema.GroupVersionKind) schema.GroupVersionKind {
	switch sub {
	case "", "status":
		return parent
	case "scale":
		return schema.GroupVersionKind{Group: "autoscaling", Version: "v1", Kind: "Scale"}
	}
	for _, s := range res.Subresources {
		if s.Name == sub && !s.Kind.Empty() {
			return s.Kind
		}
	}
	return parent
}

// excluded are the resources kube-apiserver v1.37 never sends to webhooks
// (ExcludeAdmissionWebhookVirtualResources, on by default): the reviews.
var excluded = map[schema.GroupResource]bool{
	{Group: "authentication.k8s.io", Resource: "selfsubjectreviews"}:       true,
	{Group: "authentication.k8s.io", Resource: "tokenreviews"}:             true,
	{Group: "authorization.k8s.io", Resource: "localsubjectaccessreviews"}: true,
	{Group: "authorization.k8s.io", Resource: "selfsubjectaccessreviews"}:  true,
	{Group: "authorization.k8s.io", Resource: "selfsubjectrulesreviews"}:   true,
	{Group: "authorization.k8s.io", Resource: "subjectaccessreviews"}:      true,
}

// exempt: the webhook configurations and admission policies and their
// bindings are never sent to webhooks (so a webhook cannot lock itself in),
// nor the virtual review resources.
func exempt(r *request) bool {
	if excluded[r.gvr.GroupResource()] {
		return true
	}
	if r.gvk.Group != "admissionregistration.k8s.io" {
		return false
	}
	switch r.gvk.Kind {
	case "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration", "ValidatingAdmissionPolicy",
		"ValidatingAdmissionPolicyBinding", "MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding":
		return true
	}
	return false
}

// matchRules reports whether one of rules selects r.
func matchRules(rules []admissionregistrationv1.RuleWithOperations, r *request) bool {
	for i := range rules {
		if matchRule(&rules[i], r) {
			return true
		}
	}
	return false
}

// matchRule is the rule matcher the admission policies share
// (operations, group, version, resource/subresource, scope).
func matchRule(rule *admissionregistrationv1.RuleWithOperations, r *request) bool {
	return policycel.MatchRule(*rule, r.a)
}

// matchNamespace applies h's namespaceSelector, as kube's namespace
// matcher: cluster-scoped objects other than namespaces always match; a
// namespace being created or updated matches by its own labels.
func matchNamespace(ctx context.Context, env registry.Env, h *hook, r *request) (bool, error) {
	if r.a.Namespace == "" && r.gvr.Resource != "namespaces" {
		return true, nil
	}
	if h.nsSelErr != nil {
		return false, apierrors.NewInternalError(h.nsSelErr)
	}
	if h.nsSel.Empty() {
		return true, nil
	}
	lbls, err := namespaceLabels(ctx, env, r)
	if err != nil {
		return false, err
	}
	return h.nsSel.Matches(labels.Set(lbls)), nil
}

func namespaceLabels(ctx context.Context, env registry.Env, r *request) (map[string]string, error) {
	if r.gvr.Resource == "namespaces" && r.gvr.Group == "" && r.subresource == "" &&
		(r.a.Operation == registry.Create || r.a.Operation == registry.Update) {
		return labelsOf(r.a.Object), nil
	}
	if r.nsRead {
		return r.nsLabels, nil
	}
	name := r.a.Namespace
	if r.gvr.Resource == "namespaces" && r.gvr.Group == "" {
		name = r.a.Name
	}
	ns, err := policycel.Namespace(ctx, env, name)
	if err != nil {
		if apierrors.IsNotFound(err) {
			return nil, err
		}
		return nil, apierrors.NewInternalError(err)
	}
	r.nsLabels, r.nsRead = ns.Labels, true
	return r.nsLabels, nil
}

// matchObject applies h's objectSelector to the object or the old object.
func matchObject(h *hook, r *request) (bool, error) {
	if h.objSelErr != nil {
		return false, apierrors.NewInternalError(h.objSelErr)
	}
	if h.objSel.Empty() {
		return true, nil
	}
	return selects(h.objSel, r.a.Object) || selects(h.objSel, r.a.Old), nil
}

func selects(sel labels.Selector, obj runtime.Object) bool {
	if obj == nil {
		return false
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return false
	}
	return sel.Matches(labels.Set(m.GetLabels()))
}

func labelsOf(obj runtime.Object) map[string]string {
	if obj == nil {
		return nil
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil
	}
	return m.GetLabels()
}

// shouldCall decides whether h is called for r, as kube's ShouldCallHook:
// selectors, then rules (under matchPolicy Equivalent, those of the
// equivalent resources when r's own does not match), then match
// conditions. It returns the request h is called with — r, or r seen as
// the equivalent resource a rule selected — and nil when h is not called.
// A refusal (a namespace that is not found, a condition that fails to
// evaluate under Fail) is returned as the error.
func shouldCall(ctx context.Context, env registry.Env, h *hook, r *request) (*request, error) {
	nsMatch, nsErr := matchNamespace(ctx, env, h, r)
	if !nsMatch && nsErr == nil {
		return nil, nil
	}
	objMatch, objErr := matchObject(h, r)
	if !objMatch && objErr == nil {
		return nil, nil
	}
	var eq *registry.Resource
	if !matchRules(h.rules, r) {
		if eq = matchEquivalent(env, h, r); eq == nil {
			return nil, nil
		}
	}
	if nsErr != nil {
		return nil, nsErr
	}
	if objErr != nil {
		return nil, objErr
	}
	target := r
	if eq != nil {
		var err error
		if target, err = r.as(ctx, eq); err != nil {
			return nil, err
		}
	}
	if h.conditions != nil {
		ok, err := h.conditions.match(ctx, env, target)
		if err != nil {
			return nil, apierrors.NewForbidden(r.gvr.GroupResource(), r.a.Name, err)
		}
		if !ok {
			return nil, nil
		}
	}
	return target, nil
}
