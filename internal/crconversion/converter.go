package crconversion

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextv1beta1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
)

// Caller posts one ConversionReview (in, a *v1.ConversionReview or a
// *v1beta1.ConversionReview) to the CRD's webhook and decodes the answer
// into out (of the same type). Its errors are the webhook client's,
// worded as Kubernetes' (they end up after "failed: ").
type Caller interface {
	Call(ctx context.Context, in, out runtime.Object) error
}

// CallerFunc is a Caller.
type CallerFunc func(ctx context.Context, in, out runtime.Object) error

// Call calls f.
func (f CallerFunc) Call(ctx context.Context, in, out runtime.Object) error { return f(ctx, in, out) }

// Converter converts the objects of one CRD through its webhook.
type Converter struct {
	group  string
	review string // "v1" or "v1beta1"
	call   Caller
	// newUID makes request uids (uuid.NewUUID; tests may fix it).
	newUID func() types.UID
}

// New returns the Converter of crd, whose conversion strategy must be
// Webhook. It fails when the CRD names no ConversionReview version this
// server speaks (validation refuses such a CRD).
func New(crd *apiextv1.CustomResourceDefinition, call Caller) (*Converter, error) {
	conv := crd.Spec.Conversion
	if conv == nil || conv.Strategy != apiextv1.WebhookConverter || conv.Webhook == nil {
		return nil, fmt.Errorf("crconversion: %s has no conversion webhook", crd.Name)
	}
	review := ""
	for _, v := range conv.Webhook.ConversionReviewVersions {
		if v == apiextv1.SchemeGroupVersion.Version || v == apiextv1beta1.SchemeGroupVersion.Version {
			review = v
			break
		}
	}
	if review == "" {
		return nil, errors.New("no supported conversion review versions")
	}
	return &Converter{group: crd.Spec.Group, review: review, call: call, newUID: uuid.NewUUID}, nil
}

// ReviewVersion is the ConversionReview version the converter sends.
func (c *Converter) ReviewVersion() string { return c.review }

// Convert converts obj to apiVersion; obj is left unchanged.
func (c *Converter) Convert(ctx context.Context, obj *unstructured.Unstructured, apiVersion string) (*unstructured.Unstructured, error) {
	if obj.GetAPIVersion() == apiVersion {
		return obj, nil
	}
	if isEmpty(obj) {
		out := obj.DeepCopy()
		out.SetAPIVersion(apiVersion)
		return out, nil
	}
	gvk := obj.GroupVersionKind()
	converted, err := c.exchange(ctx, gvk, []*unstructured.Unstructured{obj}, apiVersion)
	if err != nil {
		return nil, err
	}
	if len(converted) != 1 {
		return nil, failure("conversion webhook for %v returned %d objects, expected 1", gvk, len(converted))
	}
	out, err := decodeObject(converted[0])
	if err != nil {
		return nil, failure("%v", err)
	}
	if err := checkKind(obj, out, apiVersion); err != nil {
		return nil, failure("conversion webhook for %v returned invalid object at index 0: %v", gvk, err)
	}
	if err := checkIdentity(obj, out); err != nil {
		return nil, failure("conversion webhook for %v returned invalid object: %v", gvk, err)
	}
	if err := restoreObjectMeta(obj, out); err != nil {
		return nil, failure("conversion webhook for %v returned invalid metadata: %v", gvk, err)
	}
	return out, nil
}

// ConvertList converts items to apiVersion in one review (those already at
// apiVersion are not sent) and returns the converted items in order;
// items are left unchanged.
func (c *Converter) ConvertList(ctx context.Context, items []*unstructured.Unstructured, apiVersion string) ([]*unstructured.Unstructured, error) {
	var send []*unstructured.Unstructured
	var at []int
	for i, it := range items {
		if it.GetAPIVersion() != apiVersion {
			send = append(send, it)
			at = append(at, i)
		}
	}
	out := slices.Clone(items)
	if len(send) == 0 {
		return out, nil
	}
	gvk := send[0].GroupVersionKind()
	converted, err := c.exchange(ctx, gvk, send, apiVersion)
	if err != nil {
		return nil, err
	}
	if len(converted) != len(send) {
		return nil, failure("conversion webhook for %v returned %d objects, expected %d", gvk, len(converted), len(send))
	}
	for j, raw := range converted {
		orig := send[j]
		obj, err := decodeObject(raw)
		if err != nil {
			return nil, failure("conversion webhook for %v returned invalid converted object at index %v: %v", gvk, j, err)
		}
		if err := checkKind(orig, obj, apiVersion); err != nil {
			return nil, failure("conversion webhook for %v returned invalid converted object at index %v: %v", gvk, j, err)
		}
		if err := checkIdentity(orig, obj); err != nil {
			return nil, failure("conversion webhook for %v returned invalid converted object at index %v: %v", gvk, j, err)
		}
		if err := restoreObjectMeta(orig, obj); err != nil {
			return nil, failure("conversion webhook for %v returned invalid metadata in object at index %v: %v", gvk, j, err)
		}
		out[at[j]] = obj
	}
	return out, nil
}

// exchange sends objs in one review and returns the converted objects of
// a successful answer.
func (c *Converter) exchange(ctx context.Context, gvk schema.GroupVersionKind, objs []*unstructured.Unstructured, apiVersion string) ([]runtime.RawExtension, error) {
	uid := c.newUID()
	raw := make([]runtime.RawExtension, len(objs))
	for i, o := range objs {
		raw[i] = runtime.RawExtension{Object: o}
	}
	in, out := c.newReview(raw, apiVersion, uid)
	if err := c.call.Call(ctx, in, out); err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			// kube-apiserver calls without a deadline of its own: the
			// request's timeout ends a webhook that hangs, with its 504.
			return nil, apierrors.NewTimeoutError("request did not complete within the allotted timeout", 0)
		}
		return nil, failure("conversion webhook for %v failed: %v", gvk, err)
	}
	converted, err := responseObjects(uid, out)
	if err != nil {
		return nil, failure("conversion webhook for %v failed: %v", gvk, err)
	}
	return converted, nil
}

// newReview returns the request review and an empty one for the answer.
func (c *Converter) newReview(objs []runtime.RawExtension, apiVersion string, uid types.UID) (in, out runtime.Object) {
	if c.review == apiextv1beta1.SchemeGroupVersion.Version {
		return &apiextv1beta1.ConversionReview{
			TypeMeta: metav1.TypeMeta{APIVersion: apiextv1beta1.SchemeGroupVersion.String(), Kind: "ConversionReview"},
			Request:  &apiextv1beta1.ConversionRequest{UID: uid, DesiredAPIVersion: apiVersion, Objects: objs},
			Response: &apiextv1beta1.ConversionResponse{},
		}, &apiextv1beta1.ConversionReview{}
	}
	return &apiextv1.ConversionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: apiextv1.SchemeGroupVersion.String(), Kind: "ConversionReview"},
		Request:  &apiextv1.ConversionRequest{UID: uid, DesiredAPIVersion: apiVersion, Objects: objs},
		Response: &apiextv1.ConversionResponse{},
	}, &apiextv1.ConversionReview{}
}

// responseObjects checks a decoded answer as Kubernetes does and returns
// its converted objects.
func responseObjects(uid types.UID, out runtime.Object) ([]runtime.RawExtension, error) {
	switch r := out.(type) {
	case *apiextv1.ConversionReview:
		want := apiextv1.SchemeGroupVersion.WithKind("ConversionReview")
		if got := r.GroupVersionKind(); got != want {
			return nil, fmt.Errorf("expected webhook response of %v, got %v", want, got)
		}
		if r.Response == nil {
			return nil, errors.New("no response provided")
		}
		if r.Response.UID != uid {
			return nil, fmt.Errorf("expected response.uid=%q, got %q", uid, r.Response.UID)
		}
		return r.Response.ConvertedObjects, resultError(r.Response.Result)
	case *apiextv1beta1.ConversionReview:
		// As Kubernetes: v1beta1 answers are not checked for kind or uid.
		if r.Response == nil {
			return nil, errors.New("no response provided")
		}
		return r.Response.ConvertedObjects, resultError(r.Response.Result)
	}
	return nil, fmt.Errorf("unrecognized response type: %T", out)
}

func resultError(st metav1.Status) error {
	if st.Status == metav1.StatusSuccess {
		return nil
	}
	if st.Message != "" {
		return errors.New(st.Message)
	}
	return fmt.Errorf("response.result.status was '%s', not 'Success'", st.Status)
}

// decodeObject reads one converted object.
func decodeObject(raw runtime.RawExtension) (*unstructured.Unstructured, error) {
	if u, ok := raw.Object.(*unstructured.Unstructured); ok {
		return u.DeepCopy(), nil
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(raw.Raw); err != nil {
		return nil, err
	}
	return u, nil
}

// checkKind checks a converted object's apiVersion and kind.
func checkKind(orig, conv *unstructured.Unstructured, apiVersion string) error {
	want, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return err
	}
	if got := conv.GroupVersionKind().GroupVersion(); got != want {
		return fmt.Errorf("invalid groupVersion (expected %v, received %v)", want, got)
	}
	if e, a := orig.GetKind(), conv.GetKind(); e != a {
		return fmt.Errorf("invalid kind (expected %v, received %v)", e, a)
	}
	return nil
}

// checkIdentity checks that a converted object is the original one: same
// name, namespace and uid.
func checkIdentity(orig, conv *unstructured.Unstructured) error {
	switch {
	case orig.GetName() != conv.GetName():
		return fmt.Errorf("must have the same name: %v != %v", orig.GetName(), conv.GetName())
	case orig.GetNamespace() != conv.GetNamespace():
		return fmt.Errorf("must have the same namespace: %v != %v", orig.GetNamespace(), conv.GetNamespace())
	case orig.GetUID() != conv.GetUID():
		return fmt.Errorf("must have the same UID: %v != %v", orig.GetUID(), conv.GetUID())
	}
	return nil
}

// isEmpty reports an object with nothing but apiVersion and kind.
func isEmpty(u *unstructured.Unstructured) bool {
	if len(u.Object) != 2 {
		return false
	}
	_, k := u.Object["kind"]
	_, v := u.Object["apiVersion"]
	return k && v
}

// failure is kube-apiserver's answer to an error that is not a Status:
// 500, no reason, the error's text.
func failure(format string, args ...any) *apierrors.StatusError {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure, Code: http.StatusInternalServerError,
		Message: fmt.Sprintf(format, args...),
	}}
}
