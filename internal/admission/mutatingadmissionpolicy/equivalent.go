package mutatingadmissionpolicy

import (
	"context"
	"fmt"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/setpoint-dev/setpoint/internal/admission/policycel"
	"github.com/setpoint-dev/setpoint/internal/registry"
)

// equivalentAt is the equivalent resource a policy matched at gvr
// (matchPolicy Equivalent) and a seen as a request for it, its old object
// converted; nil, nil when gvr is a's own resource or the objects are the
// same at every version (subresources with a kind of their own: scale).
func equivalentAt(ctx context.Context, env registry.Env, a *registry.Attributes, gvr schema.GroupVersionResource) (*registry.Resource, *registry.Attributes, error) {
	if a.Resource == nil || gvr == policycel.RequestGVR(a) || (a.Subresource != "" && a.Subresource != "status") {
		return nil, nil, nil
	}
	va, err := policycel.Versioned(ctx, env, a, gvr)
	if err != nil {
		return nil, nil, err
	}
	return va.Resource, va, nil
}

// runAt runs the invocation on obj, the object at a's version (as CEL's
// map): at the policy's matched version when it is another, converting
// the object there and the result back, as kube-apiserver mutates the
// versioned object and converts it back to the request's version.
func (inv *invocation) runAt(ctx context.Context, env registry.Env, a *registry.Attributes, tc interface{}, obj map[string]any) (map[string]any, []policyError, error) {
	if inv.at == nil {
		next, errs := inv.run(ctx, tc, obj)
		return next, errs, nil
	}
	cur, err := decodeLike(a.Object, a.Resource, obj)
	if err != nil {
		return nil, nil, err
	}
	at, err := convert(ctx, cur, a.Resource, inv.at)
	if err != nil {
		return nil, nil, err
	}
	atGVK := inv.at.GVK()
	atMap, err := policycel.ToMap(at, atGVK)
	if err != nil {
		return nil, nil, apierrors.NewInternalError(err)
	}
	var atTC interface{}
	if s, ok := env.(registry.TypeConverterSource); ok {
		if c := s.TypeConverterFor(inv.at.GVR()); c != nil {
			atTC = c
		}
	}
	next, errs := inv.run(ctx, atTC, atMap)
	mutated, err := decodeLike(at, inv.at, next)
	if err != nil {
		return nil, nil, err
	}
	back, err := convert(ctx, mutated, inv.at, a.Resource)
	if err != nil {
		return nil, nil, err
	}
	out, err := policycel.ToMap(back, policycel.RequestGVK(a))
	if err != nil {
		return nil, nil, apierrors.NewInternalError(err)
	}
	return out, errs, nil
}

// decodeLike decodes obj (CEL's map) into a new object of like's Go type,
// defaulted by res's kind.
func decodeLike(like runtime.Object, res *registry.Resource, obj map[string]any) (runtime.Object, error) {
	if _, ok := like.(*unstructured.Unstructured); ok {
		return &unstructured.Unstructured{Object: runtime.DeepCopyJSON(obj)}, nil
	}
	fresh := reflect.New(reflect.TypeOf(like).Elem()).Interface().(runtime.Object)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj, fresh); err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("failed to convert object: %w", err))
	}
	if res != nil && res.Strategy != nil {
		res.Strategy.Default(fresh)
	}
	return fresh, nil
}

// convert converts between equivalent resources; a failure is an internal
// error unless the conversion (a webhook's) gave an API error.
func convert(ctx context.Context, obj runtime.Object, from, to *registry.Resource) (runtime.Object, error) {
	out, err := registry.ConvertEquivalent(ctx, obj, from, to)
	if err != nil {
		if _, ok := err.(apierrors.APIStatus); ok {
			return nil, err
		}
		return nil, apierrors.NewInternalError(err)
	}
	return out, nil
}
