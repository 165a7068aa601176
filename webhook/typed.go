package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Warnings are shown to the client that made the request (kubectl prints
// them as "Warning: ...").
type Warnings []string

// Defaulter fills in an object's defaults: Default changes obj in place.
// An error refuses the request (see the package documentation).
type Defaulter[T runtime.Object] interface {
	Default(ctx context.Context, obj T) error
}

// Validator decides whether a create, update or delete of a T may happen.
type Validator[T runtime.Object] interface {
	ValidateCreate(ctx context.Context, obj T) (Warnings, error)
	ValidateUpdate(ctx context.Context, oldObj, newObj T) (Warnings, error)
	ValidateDelete(ctx context.Context, obj T) (Warnings, error)
}

// KindOf returns the kind scheme registers for the Go type T.
func KindOf[T runtime.Object](scheme *runtime.Scheme) (schema.GroupVersionKind, error) {
	kinds, _, err := scheme.ObjectKinds(newObject[T]())
	if err != nil {
		return schema.GroupVersionKind{}, fmt.Errorf("webhook: kind of %T: %w", *new(T), err)
	}
	return kinds[0], nil
}

// MutatePath is where the defaulting webhook of gvk is served:
// "/mutate-<group, dots as dashes>-<version>-<lower-case kind>".
func MutatePath(gvk schema.GroupVersionKind) string { return "/mutate-" + pathSuffix(gvk) }

// ValidatePath is where the validating webhook of gvk is served:
// "/validate-<group, dots as dashes>-<version>-<lower-case kind>".
func ValidatePath(gvk schema.GroupVersionKind) string { return "/validate-" + pathSuffix(gvk) }

func pathSuffix(gvk schema.GroupVersionKind) string {
	return strings.ReplaceAll(gvk.Group, ".", "-") + "-" + gvk.Version + "-" + strings.ToLower(gvk.Kind)
}

// newObject returns a new zero T (T is a pointer to a struct).
func newObject[T runtime.Object]() T {
	t := reflect.TypeFor[T]()
	if t.Kind() != reflect.Pointer {
		var zero T
		return zero
	}
	return reflect.New(t.Elem()).Interface().(T)
}

// Defaulting returns the mutating webhook of T: it decodes the request's
// object, calls d.Default and answers with the JSON Patch of what changed.
func Defaulting[T runtime.Object](scheme *runtime.Scheme, d Defaulter[T]) (Handler, error) {
	gvk, err := KindOf[T](scheme)
	if err != nil {
		return nil, err
	}
	return HandlerFunc(func(ctx context.Context, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
		if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
			return Allowed() // nothing to default in a delete or connect
		}
		if resp := checkKind(req, gvk); resp != nil {
			return resp
		}
		obj, before, err := decode[T](req.Object.Raw)
		if err != nil {
			return Errored(http.StatusBadRequest, err)
		}
		if err := d.Default(ctx, obj); err != nil {
			return refusal(err, nil)
		}
		after, err := json.Marshal(obj)
		if err != nil {
			return Errored(http.StatusInternalServerError, fmt.Errorf("encode defaulted %s: %w", gvk.Kind, err))
		}
		patch, err := Patch(req.Object.Raw, before, after)
		if err != nil {
			return Errored(http.StatusInternalServerError, err)
		}
		resp := Allowed()
		if len(patch) > 0 {
			pt := admissionv1.PatchTypeJSONPatch
			resp.Patch, resp.PatchType = patch, &pt
		}
		return resp
	}), nil
}

// Validating returns the validating webhook of T: creates and updates are
// checked on the request's object (and old object), deletes on the old
// object; connects are admitted.
func Validating[T runtime.Object](scheme *runtime.Scheme, v Validator[T]) (Handler, error) {
	gvk, err := KindOf[T](scheme)
	if err != nil {
		return nil, err
	}
	return HandlerFunc(func(ctx context.Context, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
		if resp := checkKind(req, gvk); resp != nil {
			return resp
		}
		var warnings Warnings
		var err error
		switch req.Operation {
		case admissionv1.Create:
			obj, _, derr := decode[T](req.Object.Raw)
			if derr != nil {
				return Errored(http.StatusBadRequest, derr)
			}
			warnings, err = v.ValidateCreate(ctx, obj)
		case admissionv1.Update:
			obj, _, derr := decode[T](req.Object.Raw)
			if derr != nil {
				return Errored(http.StatusBadRequest, derr)
			}
			old, _, derr := decode[T](req.OldObject.Raw)
			if derr != nil {
				return Errored(http.StatusBadRequest, fmt.Errorf("old object: %w", derr))
			}
			warnings, err = v.ValidateUpdate(ctx, old, obj)
		case admissionv1.Delete:
			old, _, derr := decode[T](req.OldObject.Raw)
			if derr != nil {
				return Errored(http.StatusBadRequest, fmt.Errorf("object being deleted: %w", derr))
			}
			warnings, err = v.ValidateDelete(ctx, old)
		default:
			return Allowed()
		}
		if err != nil {
			return refusal(err, warnings)
		}
		resp := Allowed()
		resp.Warnings = warnings
		return resp
	}), nil
}

// checkKind refuses a request for a kind other than the handler's.
func checkKind(req *admissionv1.AdmissionRequest, gvk schema.GroupVersionKind) *admissionv1.AdmissionResponse {
	got := schema.GroupVersionKind{Group: req.Kind.Group, Version: req.Kind.Version, Kind: req.Kind.Kind}
	if got != gvk {
		return Errored(http.StatusBadRequest, fmt.Errorf("the webhook of %s was sent a %s", gvk, got))
	}
	return nil
}

// decode reads raw into a new T and returns it with its JSON encoding
// (what T makes of raw).
func decode[T runtime.Object](raw []byte) (T, []byte, error) {
	obj := newObject[T]()
	if len(raw) == 0 {
		return obj, nil, fmt.Errorf("no object in the request")
	}
	if err := json.Unmarshal(raw, obj); err != nil {
		return obj, nil, fmt.Errorf("decode %T: %w", obj, err)
	}
	enc, err := json.Marshal(obj)
	if err != nil {
		return obj, nil, fmt.Errorf("encode %T: %w", obj, err)
	}
	return obj, enc, nil
}

// refusal turns a Defaulter's or Validator's error into a refusal: an API
// status error keeps its Status, any other error is a 403.
func refusal(err error, warnings Warnings) *admissionv1.AdmissionResponse {
	var resp *admissionv1.AdmissionResponse
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		resp = Refused(st.Status())
	} else {
		resp = Denied(err.Error())
	}
	resp.Warnings = warnings
	return resp
}
