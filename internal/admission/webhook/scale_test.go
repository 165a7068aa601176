package webhook_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/testserver"
)

// deploymentsHook is a webhook of resource (deployments or
// deployments/scale) at apps/v1 in namespaces labelled for the tests.
func deploymentsHook(name, url string, ca []byte, resource string) string {
	caJSON, _ := json.Marshal(ca)
	return fmt.Sprintf(`{"name":%q,"clientConfig":{"url":%q,"caBundle":%s},
		"rules":[{"operations":["UPDATE"],"apiGroups":["apps"],"apiVersions":["v1"],"resources":[%q]}],
		"namespaceSelector":{"matchLabels":{"webhook-test":"yes"}},
		"sideEffects":"None","admissionReviewVersions":["v1"]}`, name, url, caJSON, resource)
}

const scaleDeployment = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"replicas":1,
	"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}`

// TestScaleSubresource: a write through deployments/scale reaches the
// webhooks of deployments/scale, as kube-apiserver sends it, with Scale
// objects (kind autoscaling/v1 Scale, resource apps/v1 deployments,
// subResource scale; the new and the current replicas); a mutating
// webhook's change of the Scale's replicas is what is stored; the
// webhooks of deployments are not called for it.
func TestScaleSubresource(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	namespace(t, s, "scale")
	jp := admissionv1.PatchTypeJSONPatch
	hs := startHooks(t, map[string]answer{
		"/scale": func(req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
			return &admissionv1.AdmissionResponse{Allowed: true, PatchType: &jp, Patch: []byte(`[{"op":"replace","path":"/spec/replicas","value":4}]`)}
		},
		"/main":    allow,
		"/checked": allow,
	})
	register(t, s, "MutatingWebhookConfiguration", "scale-mutate",
		deploymentsHook("scale.example.com", hs.URL+"/scale", hs.CABundle, "deployments/scale"),
		deploymentsHook("main.example.com", hs.URL+"/main", hs.CABundle, "deployments"))
	register(t, s, "ValidatingWebhookConfiguration", "scale-validate",
		deploymentsHook("checked.example.com", hs.URL+"/checked", hs.CABundle, "deployments/scale"))
	const deployments = "/apis/apps/v1/namespaces/scale/deployments"
	mustDo(t, s, "POST", deployments, scaleDeployment, 201)
	eventually(t, "the webhooks", func() bool {
		_, body, _ := s.Do(t, "PATCH", deployments+"/web/scale?dryRun=All", "application/merge-patch+json", strings.NewReader(`{"spec":{"replicas":2}}`))
		return strings.Contains(string(body), `"replicas":4`) && len(hs.got("/checked")) > 0
	})
	mains := len(hs.got("/main"))

	code, body, _ := s.Do(t, "PATCH", deployments+"/web/scale", "application/merge-patch+json", strings.NewReader(`{"spec":{"replicas":7}}`))
	var answered autoscalingv1.Scale
	if err := json.Unmarshal(body, &answered); code != 200 || err != nil || answered.Spec.Replicas != 4 {
		t.Fatalf("scale answered %d %s, want the webhook's 4 replicas", code, body)
	}
	stored := mustDo(t, s, "GET", deployments+"/web", "", 200)
	if !strings.Contains(stored, `"replicas":4`) {
		t.Errorf("the deployment stored is not at the webhook's 4 replicas: %s", stored)
	}
	if n := len(hs.got("/main")); n != mains {
		t.Errorf("the webhook of deployments was called %d times for writes through deployments/scale", n-mains)
	}
	scales := hs.got("/scale")
	checks := hs.got("/checked")
	for what, req := range map[string]*admissionv1.AdmissionRequest{
		"mutating": scales[len(scales)-1].Request, "validating": checks[len(checks)-1].Request,
	} {
		wantReplicas := map[string]int32{"mutating": 7, "validating": 4}[what]
		checkScaleReview(t, what, req, wantReplicas)
	}
}

// checkScaleReview checks one review of a write through deployments/scale
// from 1 replica to want.
func checkScaleReview(t *testing.T, what string, req *admissionv1.AdmissionRequest, want int32) {
	t.Helper()
	scaleKind := metav1.GroupVersionKind{Group: "autoscaling", Version: "v1", Kind: "Scale"}
	deployments := metav1.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	if req.Kind != scaleKind || req.Resource != deployments || req.SubResource != "scale" ||
		*req.RequestKind != scaleKind || *req.RequestResource != deployments || req.RequestSubResource != "scale" ||
		req.Operation != admissionv1.Update || req.Name != "web" || req.Namespace != "scale" {
		t.Errorf("%s review: kind %v resource %v subResource %q, requestKind %v requestResource %v requestSubResource %q, %s %s/%s",
			what, req.Kind, req.Resource, req.SubResource, req.RequestKind, req.RequestResource, req.RequestSubResource,
			req.Operation, req.Namespace, req.Name)
	}
	var obj, old autoscalingv1.Scale
	if err := json.Unmarshal(req.Object.Raw, &obj); err != nil {
		t.Fatalf("%s review object: %v", what, err)
	}
	if err := json.Unmarshal(req.OldObject.Raw, &old); err != nil {
		t.Fatalf("%s review oldObject: %v", what, err)
	}
	if obj.Kind != "Scale" || obj.APIVersion != "autoscaling/v1" || obj.Name != "web" || obj.Spec.Replicas != want ||
		old.Kind != "Scale" || old.Spec.Replicas != 1 || old.Status.Selector != "app=web" {
		t.Errorf("%s review: object %s, oldObject %s", what, req.Object.Raw, req.OldObject.Raw)
	}
}
