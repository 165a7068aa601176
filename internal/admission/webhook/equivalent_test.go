package webhook_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/setpoint-dev/setpoint/internal/testserver"
)

// hpaHook is a webhook of the HorizontalPodAutoscalers at autoscaling/v2
// in namespaces labelled for the tests, with matchPolicy policy.
func hpaHook(name, url string, ca []byte, policy string) string {
	caJSON, _ := json.Marshal(ca)
	return fmt.Sprintf(`{"name":%q,"clientConfig":{"url":%q,"caBundle":%s},
		"rules":[{"operations":["CREATE","UPDATE"],"apiGroups":["autoscaling"],"apiVersions":["v2"],"resources":["horizontalpodautoscalers"]}],
		"namespaceSelector":{"matchLabels":{"webhook-test":"yes"}},"matchPolicy":%q,
		"sideEffects":"None","admissionReviewVersions":["v1"]}`, name, url, caJSON, policy)
}

const hpaV1 = `{"apiVersion":"autoscaling/v1","kind":"HorizontalPodAutoscaler","metadata":{"name":%q},
	"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},"minReplicas":1,"maxReplicas":5,"targetCPUUtilizationPercentage":60}}`

// TestMatchPolicyEquivalent: a webhook of autoscaling/v2 with matchPolicy
// Equivalent is called for a write at autoscaling/v1 with the object
// converted to v2 (kind and resource v2, requestKind and requestResource
// v1), and its patch — made at v2 — reaches the stored object; with
// Exact it is not called.
func TestMatchPolicyEquivalent(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	namespace(t, s, "eqv")
	jp := admissionv1.PatchTypeJSONPatch
	hs := startHooks(t, map[string]answer{
		"/equivalent": func(req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
			return &admissionv1.AdmissionResponse{Allowed: true, PatchType: &jp, Patch: []byte(
				`[{"op":"add","path":"/metadata/labels","value":{"mutated-at":"v2"}},` +
					`{"op":"add","path":"/spec/behavior","value":{"scaleDown":{"stabilizationWindowSeconds":42}}}]`)}
		},
		"/exact": allow,
	})
	register(t, s, "MutatingWebhookConfiguration", "eqv-mutate",
		hpaHook("equivalent.example.com", hs.URL+"/equivalent", hs.CABundle, "Equivalent"),
		hpaHook("exact.example.com", hs.URL+"/exact", hs.CABundle, "Exact"))
	const v1 = "/apis/autoscaling/v1/namespaces/eqv/horizontalpodautoscalers"
	eventually(t, "the webhook", func() bool {
		_, body, _ := do(t, s, "POST", v1+"?dryRun=All", fmt.Sprintf(hpaV1, "probe"))
		return strings.Contains(body, `"mutated-at":"v2"`)
	})

	body := mustDo(t, s, "POST", v1, fmt.Sprintf(hpaV1, "web"), 201)
	if !strings.Contains(body, `"mutated-at":"v2"`) || !strings.Contains(body, `"apiVersion":"autoscaling/v1"`) {
		t.Errorf("the v1 answer lacks the v2 webhook's label: %s", body)
	}
	got := hs.got("/equivalent")
	req := got[len(got)-1].Request
	if req.Kind != (metav1.GroupVersionKind{Group: "autoscaling", Version: "v2", Kind: "HorizontalPodAutoscaler"}) ||
		req.Resource != (metav1.GroupVersionResource{Group: "autoscaling", Version: "v2", Resource: "horizontalpodautoscalers"}) ||
		*req.RequestKind != (metav1.GroupVersionKind{Group: "autoscaling", Version: "v1", Kind: "HorizontalPodAutoscaler"}) ||
		*req.RequestResource != (metav1.GroupVersionResource{Group: "autoscaling", Version: "v1", Resource: "horizontalpodautoscalers"}) {
		t.Errorf("review names kind %v resource %v, requestKind %v requestResource %v", req.Kind, req.Resource, req.RequestKind, req.RequestResource)
	}
	var obj unstructured.Unstructured
	if err := json.Unmarshal(req.Object.Raw, &obj.Object); err != nil {
		t.Fatal(err)
	}
	metrics, _, _ := unstructured.NestedSlice(obj.Object, "spec", "metrics")
	if obj.GetAPIVersion() != "autoscaling/v2" || len(metrics) != 1 {
		t.Errorf("the webhook got %s with metrics %v, want autoscaling/v2 with the cpu target as a metric", obj.GetAPIVersion(), metrics)
	}
	if n := len(hs.got("/exact")); n != 0 {
		t.Errorf("the Exact webhook of v2 was called %d times for v1 writes", n)
	}
	v2 := mustDo(t, s, "GET", "/apis/autoscaling/v2/namespaces/eqv/horizontalpodautoscalers/web", "", 200)
	if !strings.Contains(v2, `"stabilizationWindowSeconds":42`) {
		t.Errorf("the webhook's v2-only change was lost: %s", v2)
	}

	// At v2 itself both are called, with requestKind v2.
	mustDo(t, s, "POST", "/apis/autoscaling/v2/namespaces/eqv/horizontalpodautoscalers",
		`{"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler","metadata":{"name":"direct"},
		"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},"maxReplicas":3}}`, 201)
	ex := hs.got("/exact")
	if len(ex) != 1 || ex[0].Request.RequestKind.Version != "v2" {
		t.Errorf("the Exact webhook at v2: %d calls", len(ex))
	}
}

// TestMatchPolicyEquivalentCustomResource: a webhook of a custom
// resource's v1 is called for a write at its v1beta1 (conversion None),
// with the object at v1.
func TestMatchPolicyEquivalentCustomResource(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	namespace(t, s, "eqcr")
	crd := `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"widgets.eq.example.com"},
		"spec":{"group":"eq.example.com","scope":"Namespaced","names":{"plural":"widgets","singular":"widget","kind":"Widget","listKind":"WidgetList"},
		"versions":[
		{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}},
		{"name":"v1beta1","served":true,"storage":false,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}`
	mustDo(t, s, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd, 201)
	const beta = "/apis/eq.example.com/v1beta1/namespaces/eqcr/widgets"
	eventually(t, "the custom resource", func() bool {
		code, _, _ := do(t, s, "GET", beta, "")
		return code == 200
	})
	hs := startHooks(t, map[string]answer{"/v1": allow})
	caJSON, _ := json.Marshal(hs.CABundle)
	register(t, s, "ValidatingWebhookConfiguration", "eqcr-validate", fmt.Sprintf(`{"name":"v1.eq.example.com",
		"clientConfig":{"url":%q,"caBundle":%s},
		"rules":[{"operations":["CREATE"],"apiGroups":["eq.example.com"],"apiVersions":["v1"],"resources":["widgets"]}],
		"namespaceSelector":{"matchLabels":{"webhook-test":"yes"}},"sideEffects":"None","admissionReviewVersions":["v1"]}`,
		hs.URL+"/v1", caJSON))
	eventually(t, "the webhook", func() bool {
		do(t, s, "POST", beta+"?dryRun=All", `{"apiVersion":"eq.example.com/v1beta1","kind":"Widget","metadata":{"name":"probe"}}`)
		return len(hs.got("/v1")) > 0
	})
	mustDo(t, s, "POST", beta, `{"apiVersion":"eq.example.com/v1beta1","kind":"Widget","metadata":{"name":"w"},"size":3}`, 201)
	got := hs.got("/v1")
	req := got[len(got)-1].Request
	if req.Kind.Version != "v1" || req.RequestKind.Version != "v1beta1" || req.Name != "w" ||
		!strings.Contains(string(req.Object.Raw), `"apiVersion":"eq.example.com/v1"`) {
		t.Errorf("review: kind %v requestKind %v name %q object %s", req.Kind, req.RequestKind, req.Name, req.Object.Raw)
	}
}
