package webhooks

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/compat/internal/difftest"
	"github.com/setpoint-dev/setpoint/internal/webhookclient/webhooktest"
	"github.com/setpoint-dev/setpoint/testenv"
)

const (
	eqNS     = "webhooks-diff-equivalent"
	eqConfig = "webhooks-diff-equivalent"
)

// recorder is a webhook server that allows everything and keeps the
// requests it got, per path; the paths of patches answer with that JSON
// patch.
type recorder struct {
	*webhooktest.Server
	mu  sync.Mutex
	got map[string][]*admissionv1.AdmissionRequest
}

func startRecorder(t *testing.T, paths ...string) *recorder {
	return startPatchingRecorder(t, nil, paths...)
}

func startPatchingRecorder(t *testing.T, patches map[string]string, paths ...string) *recorder {
	rec := &recorder{got: map[string][]*admissionv1.AdmissionRequest{}}
	mux := http.NewServeMux()
	for _, p := range paths {
		mux.HandleFunc(p, func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			in := &admissionv1.AdmissionReview{}
			if err := json.Unmarshal(b, in); err != nil || in.Request == nil {
				http.Error(w, "bad review", 400)
				return
			}
			rec.mu.Lock()
			rec.got[p] = append(rec.got[p], in.Request)
			rec.mu.Unlock()
			resp := &admissionv1.AdmissionResponse{UID: in.Request.UID, Allowed: true}
			if patch, ok := patches[p]; ok {
				jp := admissionv1.PatchTypeJSONPatch
				resp.PatchType, resp.Patch = &jp, []byte(patch)
			}
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(&admissionv1.AdmissionReview{
				TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"}, Response: resp})
		})
	}
	rec.Server = webhooktest.Start(t, mux)
	return rec
}

// take returns and forgets what path got.
func (rec *recorder) take(path string) []*admissionv1.AdmissionRequest {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	out := rec.got[path]
	delete(rec.got, path)
	return out
}

// seen is what a review says of the request, compared across servers.
type seen struct {
	Kind, RequestKind         metav1.GroupVersionKind
	Resource, RequestResource metav1.GroupVersionResource
	Object                    any
}

func seenOf(req *admissionv1.AdmissionRequest) seen {
	var obj map[string]any
	_ = json.Unmarshal(req.Object.Raw, &obj)
	// Only what the version decides: the spec and the apiVersion and kind.
	return seen{Kind: req.Kind, RequestKind: *req.RequestKind, Resource: req.Resource, RequestResource: *req.RequestResource,
		Object: map[string]any{"apiVersion": obj["apiVersion"], "kind": obj["kind"], "spec": obj["spec"]}}
}

// TestMatchPolicyEquivalent: webhooks of autoscaling/v2 HPAs with
// matchPolicy Equivalent and Exact, and a write at autoscaling/v1: both
// servers call the Equivalent one with the same review (kind v2, object
// converted, requestKind v1) and not the Exact one.
func TestMatchPolicyEquivalent(t *testing.T) {
	ref := referenceSide(t)
	env := testenv.StartT(t, testenv.Options{Storage: testenv.StorageMemory})
	sp, err := difftest.SideFromKubeconfig("setpoint", env.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	rec := startRecorder(t, "/equivalent", "/exact")
	caJSON, _ := json.Marshal(rec.CABundle)
	hook := func(name, policy string) string {
		return fmt.Sprintf(`{"name":"%s.webhooks-diff.example.com","clientConfig":{"url":%q,"caBundle":%s},
			"rules":[{"operations":["CREATE"],"apiGroups":["autoscaling"],"apiVersions":["v2"],"resources":["horizontalpodautoscalers"]}],
			"namespaceSelector":{"matchLabels":{"webhooks-diff-equivalent":"yes"}},"matchPolicy":%q,
			"sideEffects":"NoneOnDryRun","admissionReviewVersions":["v1"]}`, name, rec.URL+"/"+name, caJSON, policy)
	}
	cfg := fmt.Sprintf(`{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingWebhookConfiguration","metadata":{"name":%q},"webhooks":[%s,%s]}`,
		eqConfig, hook("equivalent", "Equivalent"), hook("exact", "Exact"))
	hpas := "/apis/autoscaling/v1/namespaces/" + eqNS + "/horizontalpodautoscalers"
	hpa := func(name string) string {
		return fmt.Sprintf(`{"apiVersion":"autoscaling/v1","kind":"HorizontalPodAutoscaler","metadata":{"name":%q},
			"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},"minReplicas":2,"maxReplicas":7,"targetCPUUtilizationPercentage":55}}`, name)
	}
	results := map[string]seen{}
	for _, s := range []*difftest.Side{ref, sp} {
		must(t, s, "DELETE", "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/"+eqConfig, "", 200, 404)
		must(t, s, "DELETE", "/api/v1/namespaces/"+eqNS, "", 200, 404)
		eventually(t, s.Name+": old namespace gone", func() bool {
			return must(t, s, "POST", "/api/v1/namespaces", fmt.Sprintf(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":%q,"labels":{"webhooks-diff-equivalent":"yes"}}}`, eqNS), 201, 409).Code == 201
		})
		t.Cleanup(func() {
			must(t, s, "DELETE", "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/"+eqConfig, "", 200, 404)
			must(t, s, "DELETE", "/api/v1/namespaces/"+eqNS, "", 200, 404)
		})
		must(t, s, "POST", "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations", cfg, 201)
		eventually(t, s.Name+": webhook active", func() bool {
			must(t, s, "POST", hpas+"?dryRun=All", hpa("probe"), 201)
			return len(rec.take("/equivalent")) > 0
		})
		rec.take("/exact")
		must(t, s, "POST", hpas, hpa("web"), 201)
		got := rec.take("/equivalent")
		if len(got) != 1 {
			t.Fatalf("%s: the Equivalent webhook got %d requests for one write", s.Name, len(got))
		}
		results[s.Name] = seenOf(got[0])
		if n := len(rec.take("/exact")); n != 0 {
			t.Errorf("%s: the Exact webhook of v2 was called %d times for a v1 write", s.Name, n)
		}
	}
	r, p := results[ref.Name], results[sp.Name]
	rb, _ := json.Marshal(r)
	pb, _ := json.Marshal(p)
	for _, c := range difftest.Diff(difftest.DecodeJSON(rb), difftest.DecodeJSON(pb)) {
		t.Errorf("review %s: reference %v, setpoint %v", c.Path, c.Ref, c.SP)
	}
	if !strings.Contains(string(rb), `"autoscaling/v2"`) {
		t.Errorf("the reference's review is not at v2: %s", rb)
	}
}
