package policycel

import (
	"context"
	"errors"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// Params reads the params a binding gives a policy with paramKind, from
// the server's watch cache (its store for an object not cached yet), as
// kube-apiserver's CollectParams: [nil] without paramKind or paramRef, the
// named param or those selected, and kube-apiserver's errors (a
// configuration error of the binding) otherwise.
func Params(ctx context.Context, env registry.Env, kind *admissionregistrationv1.ParamKind, ref *admissionregistrationv1.ParamRef, namespace string) ([]map[string]any, error) {
	if kind == nil || ref == nil {
		return []map[string]any{nil}, nil
	}
	gv, err := schema.ParseGroupVersion(kind.APIVersion)
	if err != nil {
		return nil, fmt.Errorf("invalid paramKind APIVersion %q: %w", kind.APIVersion, err)
	}
	gvk := gv.WithKind(kind.Kind)
	var res *registry.Resource
	if kr, ok := env.(registry.KindResolver); ok {
		res = kr.ResourceForKind(gvk)
	}
	if res == nil {
		return nil, fmt.Errorf("paramKind kind `%v` not known", paramKindString(kind))
	}
	ns := ""
	if res.Namespaced {
		ns = namespace
		if ref.Namespace != "" {
			ns = ref.Namespace
		} else if ns == "" {
			return nil, errors.New("cannot use namespaced paramRef in policy binding that matches cluster-scoped resources")
		}
	} else if ref.Namespace != "" {
		return nil, errors.New("paramRef.namespace must not be provided for a cluster-scoped `paramKind`")
	}
	objs := env.Objects(res.GVR())
	if objs == nil {
		return nil, fmt.Errorf("paramKind kind `%v` not known", paramKindString(kind))
	}
	var found []runtime.Object
	switch {
	case ref.Name != "":
		if ref.Selector != nil {
			return nil, errors.New("paramRef.name and paramRef.selector are mutually exclusive")
		}
		obj, err := registry.GetCached(ctx, objs, ns, ref.Name)
		switch {
		case err == nil:
			found = []runtime.Object{obj}
		case apierrors.IsNotFound(err):
		default:
			return nil, err
		}
	case ref.Selector != nil:
		sel, err := metav1.LabelSelectorAsSelector(ref.Selector)
		if err != nil {
			return nil, err
		}
		if cl, ok := objs.(registry.CachedLister); ok {
			found, err = cl.ListCached(ctx, ns, sel, nil)
		} else {
			found, err = objs.List(ctx, ns, sel, nil)
		}
		if err != nil {
			return nil, err
		}
	default:
		return nil, errors.New("one of name or selector must be provided")
	}
	if len(found) == 0 && ref.ParameterNotFoundAction != nil && *ref.ParameterNotFoundAction == admissionregistrationv1.DenyAction {
		return nil, errors.New("no params found for policy binding with `Deny` parameterNotFoundAction")
	}
	out := make([]map[string]any, 0, len(found))
	for _, obj := range found {
		m, err := ToMap(obj, gvk)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// paramKindString words a ParamKind as its generated String does.
func paramKindString(k *admissionregistrationv1.ParamKind) string {
	return k.String()
}
