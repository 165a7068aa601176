package webhook

import (
	"bytes"
	"encoding/json"
	"fmt"

	admissionv1 "k8s.io/api/admission/v1"
	admissionv1beta1 "k8s.io/api/admission/v1beta1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// encodeObject is obj's JSON with its apiVersion and kind (typed objects
// carry none in memory): nil for no object.
func encodeObject(obj runtime.Object, gvk schema.GroupVersionKind) ([]byte, error) {
	if obj == nil {
		return nil, nil
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	if _, ok := obj.(*unstructured.Unstructured); ok {
		return b, nil
	}
	if k := obj.GetObjectKind().GroupVersionKind(); !k.Empty() {
		return b, nil
	}
	head, err := json.Marshal(struct {
		Kind       string `json:"kind"`
		APIVersion string `json:"apiVersion"`
	}{gvk.Kind, gvk.GroupVersion().String()})
	if err != nil {
		return nil, err
	}
	if len(b) <= 2 { // {}
		return head, nil
	}
	var out bytes.Buffer
	out.Grow(len(head) + len(b))
	out.Write(head[:len(head)-1])
	out.WriteByte(',')
	out.Write(b[1:])
	return out.Bytes(), nil
}

// toMap is obj as JSON maps (CEL's view), nil for no object.
func toMap(obj runtime.Object, gvk schema.GroupVersionKind) (map[string]any, error) {
	if obj == nil {
		return nil, nil
	}
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return u.Object, nil
	}
	b, err := encodeObject(obj, gvk)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := unmarshalPreserveInts(b, &m); err != nil {
		return nil, err
	}
	return m, nil
}

// options is the request's options object, as kube sends it: the JSON
// encoding/json gives the operation's metav1 options (TestOptionsJSON).
func options(a *registry.Attributes) runtime.RawExtension {
	var kind string
	switch a.Operation {
	case registry.Create:
		kind = "CreateOptions"
	case registry.Update:
		kind = "UpdateOptions"
	case registry.Delete:
		kind = "DeleteOptions"
	default:
		return runtime.RawExtension{}
	}
	dryRun := ""
	if a.DryRun {
		dryRun = `,"dryRun":["` + metav1.DryRunAll + `"]`
	}
	return runtime.RawExtension{Raw: []byte(`{"kind":"` + kind + `","apiVersion":"meta.k8s.io/v1"` + dryRun + `}`)}
}

// requestName is the request's object name: none on a create whose name
// is generated (kube names the object after its mutating admission).
func requestName(a *registry.Attributes) string {
	if a.GeneratedName {
		return ""
	}
	return a.Name
}

func userInfo(u registry.UserInfo) authenticationv1.UserInfo {
	out := authenticationv1.UserInfo{Username: u.Name, UID: u.UID, Groups: u.Groups}
	if len(u.Extra) > 0 {
		out.Extra = make(map[string]authenticationv1.ExtraValue, len(u.Extra))
		for k, v := range u.Extra {
			out.Extra[k] = v
		}
	}
	return out
}

// v1Request is the admission request of r in admission.k8s.io/v1.
func v1Request(uid types.UID, r *request) (*admissionv1.AdmissionRequest, error) {
	obj, err := encodeObject(r.a.Object, r.gvk)
	if err != nil {
		return nil, err
	}
	old, err := encodeObject(r.a.Old, r.gvk)
	if err != nil {
		return nil, err
	}
	dry := r.a.DryRun
	gvk := metav1.GroupVersionKind{Group: r.gvk.Group, Version: r.gvk.Version, Kind: r.gvk.Kind}
	gvr := metav1.GroupVersionResource{Group: r.gvr.Group, Version: r.gvr.Version, Resource: r.gvr.Resource}
	reqGVK := metav1.GroupVersionKind{Group: r.reqGVK.Group, Version: r.reqGVK.Version, Kind: r.reqGVK.Kind}
	reqGVR := metav1.GroupVersionResource{Group: r.reqGVR.Group, Version: r.reqGVR.Version, Resource: r.reqGVR.Resource}
	return &admissionv1.AdmissionRequest{
		UID: uid, Kind: gvk, Resource: gvr, SubResource: r.subresource,
		RequestKind: &reqGVK, RequestResource: &reqGVR, RequestSubResource: r.subresource,
		Name: requestName(r.a), Namespace: r.a.Namespace, Operation: admissionv1.Operation(r.a.Operation),
		UserInfo: userInfo(r.a.User), Object: runtime.RawExtension{Raw: obj}, OldObject: runtime.RawExtension{Raw: old},
		DryRun: &dry, Options: options(r.a),
	}, nil
}

// requestMap is the `request` variable of match conditions.
func requestMap(r *request) (map[string]any, error) {
	req, err := v1Request("", r)
	if err != nil {
		return nil, err
	}
	req.Object, req.OldObject = runtime.RawExtension{}, runtime.RawExtension{}
	b, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := unmarshalPreserveInts(b, &m); err != nil {
		return nil, err
	}
	delete(m, "object")
	delete(m, "oldObject")
	return m, nil
}

// newReview returns the review sent to h (the first version of
// admissionReviewVersions setpoint speaks), the empty response it is
// decoded into, and its uid.
func newReview(h *hook, r *request) (types.UID, []byte, runtime.Object, error) {
	for _, v := range h.versions {
		switch v {
		case "v1", "v1beta1":
			uid := uuid.NewUUID()
			req, err := v1Request(uid, r)
			if err != nil {
				return "", nil, nil, err
			}
			var body []byte
			var resp runtime.Object
			if v == "v1" {
				body, err = json.Marshal(&admissionv1.AdmissionReview{
					TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"}, Request: req})
				resp = &admissionv1.AdmissionReview{}
			} else {
				body, err = json.Marshal(&admissionv1beta1.AdmissionReview{
					TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1beta1", Kind: "AdmissionReview"},
					Request:  (*admissionv1beta1.AdmissionRequest)(convertRequest(req))})
				resp = &admissionv1beta1.AdmissionReview{}
			}
			return uid, body, resp, err
		}
	}
	return "", nil, nil, fmt.Errorf("webhook does not accept known AdmissionReview versions (v1, v1beta1)")
}

// convertRequest: v1beta1's request has v1's fields under the same names.
func convertRequest(r *admissionv1.AdmissionRequest) *admissionv1beta1.AdmissionRequest {
	return &admissionv1beta1.AdmissionRequest{
		UID: r.UID, Kind: r.Kind, Resource: r.Resource, SubResource: r.SubResource, RequestKind: r.RequestKind,
		RequestResource: r.RequestResource, RequestSubResource: r.RequestSubResource, Name: r.Name, Namespace: r.Namespace,
		Operation: admissionv1beta1.Operation(r.Operation), UserInfo: r.UserInfo, Object: r.Object, OldObject: r.OldObject,
		DryRun: r.DryRun, Options: r.Options,
	}
}

// response is what a webhook answered, checked.
type response struct {
	auditAnnotations map[string]string
	allowed          bool
	patch            []byte
	patchType        admissionv1.PatchType
	result           *metav1.Status
	warnings         []string
}

// verify checks a decoded review as kube's VerifyAdmissionResponse.
func verify(uid types.UID, mutating bool, review runtime.Object) (*response, error) {
	switch rv := review.(type) {
	case *admissionv1.AdmissionReview:
		if rv.Response == nil {
			return nil, fmt.Errorf("webhook response was absent")
		}
		if rv.Response.UID != uid {
			return nil, fmt.Errorf("expected response.uid=%q, got %q", uid, rv.Response.UID)
		}
		want := admissionv1.SchemeGroupVersion.WithKind("AdmissionReview")
		if got := rv.GroupVersionKind(); got != want {
			return nil, fmt.Errorf("expected webhook response of %v, got %v", want.String(), got.String())
		}
		out := &response{auditAnnotations: rv.Response.AuditAnnotations, allowed: rv.Response.Allowed,
			result: rv.Response.Result, warnings: rv.Response.Warnings}
		if !mutating {
			if len(rv.Response.Patch) > 0 {
				return nil, fmt.Errorf("validating webhook may not return response.patch")
			}
			if rv.Response.PatchType != nil {
				return nil, fmt.Errorf("validating webhook may not return response.patchType")
			}
			return out, nil
		}
		if len(rv.Response.Patch) > 0 && rv.Response.PatchType == nil {
			return nil, fmt.Errorf("webhook returned response.patch but not response.patchType")
		}
		if len(rv.Response.Patch) == 0 && rv.Response.PatchType != nil {
			return nil, fmt.Errorf("webhook returned response.patchType but not response.patch")
		}
		out.patch = rv.Response.Patch
		if rv.Response.PatchType != nil {
			out.patchType = *rv.Response.PatchType
			if out.patchType == "" {
				return nil, fmt.Errorf("webhook returned invalid response.patchType of %q", out.patchType)
			}
		}
		return out, nil
	case *admissionv1beta1.AdmissionReview:
		if rv.Response == nil {
			return nil, fmt.Errorf("webhook response was absent")
		}
		out := &response{auditAnnotations: rv.Response.AuditAnnotations, allowed: rv.Response.Allowed,
			result: rv.Response.Result, warnings: rv.Response.Warnings}
		if mutating {
			out.patch = rv.Response.Patch
			if len(out.patch) > 0 {
				out.patchType = admissionv1.PatchTypeJSONPatch
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("unexpected response type %T", review)
}
