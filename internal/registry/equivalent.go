package registry

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// EquivalentResolver is what the server's Env also offers: kube-apiserver's
// equivalent resources, the served resources whose objects are the same
// stored objects seen at another version or in another group — the
// versions of a custom resource, autoscaling/v1 and autoscaling/v2
// HorizontalPodAutoscalers, core/v1 and events.k8s.io/v1 Events. Admission
// webhooks and policies with matchPolicy Equivalent match a request
// through them.
type EquivalentResolver interface {
	// EquivalentResources returns the served resources equivalent to res,
	// res excluded, that serve subresource (any when ""), in the order
	// they are tried: by group, then by version priority (v2 before v1
	// before v1beta1).
	EquivalentResources(res *Resource, subresource string) []*Resource
}

// HasSubresource reports whether r serves subresource ("" is the main
// resource).
func (r *Resource) HasSubresource(subresource string) bool {
	switch subresource {
	case "":
		return true
	case "status":
		return r.Status != nil
	case "scale":
		return r.Scale != nil
	}
	return r.Subresource(subresource) != nil
}

// ConvertEquivalent converts obj, an object of resource from (or of its
// status subresource), into an object of the equivalent resource to,
// leaving obj unchanged: through the stored form for resources that are
// views of another's storage, through the CustomResourceDefinition's
// conversion for custom resources. nil converts to nil.
func ConvertEquivalent(ctx context.Context, obj runtime.Object, from, to *Resource) (runtime.Object, error) {
	if obj == nil {
		return nil, nil
	}
	if from.Unstructured != to.Unstructured || from.KeyPrefix() != to.KeyPrefix() {
		return nil, fmt.Errorf("convert %s to %s: not equivalent resources", from.GVR(), to.GVR())
	}
	if from.Unstructured {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return nil, fmt.Errorf("convert %s: unexpected object type %T", from.GVR(), obj)
		}
		if to.Converter == nil {
			out := u.DeepCopy()
			out.SetGroupVersionKind(to.GVK())
			return out, nil
		}
		out, err := to.Converter.Convert(ctx, u, to.GroupVersion().String())
		if err != nil {
			return nil, err
		}
		out.SetGroupVersionKind(to.GVK())
		return out, nil
	}
	stored := obj.DeepCopyObject()
	if from.View != nil {
		s, err := from.View.ToStorage(stored)
		if err != nil {
			return nil, fmt.Errorf("convert %s to %s: %w", from.GVR(), to.GVR(), err)
		}
		stored = s
	}
	out := stored
	if to.View != nil {
		o, err := to.View.FromStorage(stored)
		if err != nil {
			return nil, fmt.Errorf("convert %s to %s: %w", from.GVR(), to.GVR(), err)
		}
		out = o
	}
	out.GetObjectKind().SetGroupVersionKind(to.GVK())
	return out, nil
}

// As returns a copy of a seen as a request for to, a resource equivalent to
// a's (matchPolicy Equivalent): to is its Resource, and its objects are
// converted to to's version. The objects of subresources that have a kind
// of their own (scale) are the same at every version and are shared.
func (a *Attributes) As(ctx context.Context, to *Resource) (*Attributes, error) {
	out := *a
	out.Resource = to
	if a.Subresource != "" && a.Subresource != "status" {
		return &out, nil
	}
	var err error
	if out.Object, err = ConvertEquivalent(ctx, a.Object, a.Resource, to); err != nil {
		return nil, err
	}
	if out.Old, err = ConvertEquivalent(ctx, a.Old, a.Resource, to); err != nil {
		return nil, err
	}
	return &out, nil
}

// Equivalent returns the resource among the equivalents of a's (env's
// EquivalentResolver) whose group/version/resource is gvr, nil when there
// is none.
func Equivalent(env Env, res *Resource, subresource string, gvr schema.GroupVersionResource) *Resource {
	er, ok := env.(EquivalentResolver)
	if !ok {
		return nil
	}
	for _, eq := range er.EquivalentResources(res, subresource) {
		if eq.GVR() == gvr {
			return eq
		}
	}
	return nil
}
