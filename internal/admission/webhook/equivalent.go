package webhook

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/setpoint-dev/setpoint/internal/admission/policycel"
	"github.com/setpoint-dev/setpoint/internal/registry"
)

// matchEquivalent is matchPolicy Equivalent for a hook whose rules do not
// select r's resource: the first equivalent resource (registry.
// EquivalentResolver: another version of the resource, or a resource
// stored as it is) that one of the rules selects, the rules tried in
// order and, for each, the equivalents in order, as kube's
// ShouldCallHook; nil when none is selected or h matches Exact.
func matchEquivalent(env registry.Env, h *hook, r *request) *registry.Resource {
	if !h.equivalent || r.a.Resource == nil {
		return nil
	}
	eqs := r.equivalentResources(env)
	if len(eqs) == 0 {
		return nil
	}
	a := *r.a
	for i := range h.rules {
		for _, eq := range eqs {
			a.Resource = eq
			if policycel.MatchRule(h.rules[i], &a) {
				return eq
			}
		}
	}
	return nil
}

func (r *request) equivalentResources(env registry.Env) []*registry.Resource {
	if !r.equivalentsRead {
		if er, ok := env.(registry.EquivalentResolver); ok {
			r.equivalents = er.EquivalentResources(r.a.Resource, r.subresource)
		}
		r.equivalentsRead = true
	}
	return r.equivalents
}

// as is r seen as a request for res, an equivalent resource: the webhook
// gets res's kind and resource (the client's stay in requestKind and
// requestResource) and the objects converted to res's version. The
// objects of subresources with a kind of their own (scale) are the same
// at every version and are not converted.
func (r *request) as(ctx context.Context, res *registry.Resource) (*request, error) {
	a, err := r.a.As(ctx, res)
	if err != nil {
		return nil, conversionError(err)
	}
	gvk := subresourceKind(res, r.subresource, res.GVK())
	return &request{a: a, gvr: res.GVR(), gvk: gvk, subresource: r.subresource, reqGVR: r.reqGVR, reqGVK: r.reqGVK,
		base: r, nsLabels: r.nsLabels, nsRead: r.nsRead}, nil
}

// writeBack makes the request r is a view of hold r's object, converted
// back to the client's version, after a webhook changed it.
func (r *request) writeBack(ctx context.Context) error {
	if r.base == nil || (r.subresource != "" && r.subresource != "status") {
		return nil // the request itself, or an object shared with it (registry.Attributes.As)
	}
	back, err := registry.ConvertEquivalent(ctx, r.a.Object, r.a.Resource, r.base.a.Resource)
	if err != nil {
		return conversionError(err)
	}
	back.GetObjectKind().SetGroupVersionKind(r.base.a.Object.GetObjectKind().GroupVersionKind())
	replace(r.base.a.Object, back)
	return nil
}

// conversionError is a failed conversion as kube-apiserver answers it: an
// internal error, unless the conversion (a webhook's) gave an API error.
func conversionError(err error) error {
	if _, ok := err.(apierrors.APIStatus); ok {
		return err
	}
	return apierrors.NewInternalError(err)
}
