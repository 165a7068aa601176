package webhooks

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"

	"github.com/setpoint-dev/setpoint/compat/internal/difftest"
	"github.com/setpoint-dev/setpoint/testenv"
)

const (
	scaleNS     = "webhooks-diff-scale"
	scaleConfig = "webhooks-diff-scale"
)

// scaleSeen is what a review of a write through deployments/scale says,
// compared across servers: the request's names and the Scales without
// their server-made metadata.
type scaleSeen struct {
	Kind, RequestKind                     any
	Resource, RequestResource             any
	SubResource, RequestSubResource, Name string
	Operation                             admissionv1.Operation
	Object, OldObject                     any
}

func scaleSeenOf(req *admissionv1.AdmissionRequest) scaleSeen {
	view := func(raw []byte) any {
		var obj map[string]any
		_ = json.Unmarshal(raw, &obj)
		meta, _ := obj["metadata"].(map[string]any)
		return map[string]any{"apiVersion": obj["apiVersion"], "kind": obj["kind"], "name": meta["name"],
			"spec": obj["spec"], "status": obj["status"]}
	}
	return scaleSeen{Kind: req.Kind, RequestKind: req.RequestKind, Resource: req.Resource, RequestResource: req.RequestResource,
		SubResource: req.SubResource, RequestSubResource: req.RequestSubResource, Name: req.Name, Operation: req.Operation,
		Object: view(req.Object.Raw), OldObject: view(req.OldObject.Raw)}
}

// TestScaleSubresource: a mutating webhook of deployments/scale that sets
// the replicas, a validating one of deployments/scale and a mutating one
// of deployments, then `kubectl scale`'s merge patch of the scale
// subresource: both servers send the two scale webhooks the same reviews
// (Scale objects), store the mutating webhook's replicas, and do not call
// the webhook of deployments.
func TestScaleSubresource(t *testing.T) {
	ref := referenceSide(t)
	env := testenv.StartT(t, testenv.Options{Storage: testenv.StorageMemory})
	sp, err := difftest.SideFromKubeconfig("setpoint", env.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	rec := startPatchingRecorder(t, map[string]string{"/scale": `[{"op":"replace","path":"/spec/replicas","value":4}]`},
		"/scale", "/checked", "/main")
	caJSON, _ := json.Marshal(rec.CABundle)
	hook := func(name, resource string) string {
		return fmt.Sprintf(`{"name":"%s.webhooks-diff.example.com","clientConfig":{"url":%q,"caBundle":%s},
			"rules":[{"operations":["UPDATE"],"apiGroups":["apps"],"apiVersions":["v1"],"resources":[%q]}],
			"namespaceSelector":{"matchLabels":{%q:"yes"}},
			"sideEffects":"NoneOnDryRun","admissionReviewVersions":["v1"]}`, name, rec.URL+"/"+name, caJSON, resource, scaleNS)
	}
	mutating := fmt.Sprintf(`{"apiVersion":"admissionregistration.k8s.io/v1","kind":"MutatingWebhookConfiguration","metadata":{"name":%q},"webhooks":[%s,%s]}`,
		scaleConfig, hook("scale", "deployments/scale"), hook("main", "deployments"))
	validating := fmt.Sprintf(`{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingWebhookConfiguration","metadata":{"name":%q},"webhooks":[%s]}`,
		scaleConfig, hook("checked", "deployments/scale"))
	const admissionregistration = "/apis/admissionregistration.k8s.io/v1/"
	deployments := "/apis/apps/v1/namespaces/" + scaleNS + "/deployments"
	const deployment = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"replicas":1,
		"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}`
	scale := func(s *difftest.Side, query string) *difftest.Response {
		resp, err := s.Do(t.Context(), difftest.Request{Method: "PATCH", Path: deployments + "/web/scale" + query,
			Header: map[string]string{"Content-Type": "application/merge-patch+json"}, Body: []byte(`{"spec":{"replicas":7}}`)})
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	results := map[string][]scaleSeen{}
	managed := map[string][]map[string]any{}
	for _, s := range []*difftest.Side{ref, sp} {
		cleanup := func() {
			must(t, s, "DELETE", admissionregistration+"mutatingwebhookconfigurations/"+scaleConfig, "", 200, 404)
			must(t, s, "DELETE", admissionregistration+"validatingwebhookconfigurations/"+scaleConfig, "", 200, 404)
			must(t, s, "DELETE", "/api/v1/namespaces/"+scaleNS, "", 200, 404)
		}
		cleanup()
		eventually(t, s.Name+": old namespace gone", func() bool {
			return must(t, s, "POST", "/api/v1/namespaces", fmt.Sprintf(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":%q,"labels":{%q:"yes"}}}`, scaleNS, scaleNS), 201, 409).Code == 201
		})
		t.Cleanup(cleanup)
		must(t, s, "POST", deployments, deployment, 201)
		must(t, s, "POST", admissionregistration+"mutatingwebhookconfigurations", mutating, 201)
		must(t, s, "POST", admissionregistration+"validatingwebhookconfigurations", validating, 201)
		eventually(t, s.Name+": webhooks active", func() bool {
			scale(s, "?dryRun=All")
			return len(rec.take("/scale")) > 0 && len(rec.take("/checked")) > 0
		})
		rec.take("/main")
		if resp := scale(s, ""); resp.Code != 200 {
			t.Fatalf("%s: scale: %d %s", s.Name, resp.Code, resp.Body)
		}
		var stored struct {
			Metadata struct {
				ManagedFields []map[string]any `json:"managedFields"`
			} `json:"metadata"`
			Spec struct{ Replicas int32 } `json:"spec"`
		}
		if err := json.Unmarshal(must(t, s, "GET", deployments+"/web", "", 200).Body, &stored); err != nil || stored.Spec.Replicas != 4 {
			t.Errorf("%s: the deployment stored has %d replicas (%v), want the scale webhook's 4", s.Name, stored.Spec.Replicas, err)
		}
		// Who owns what after the scale; times differ, whether there is one
		// does not.
		for _, e := range stored.Metadata.ManagedFields {
			_, timed := e["time"]
			e["time"] = timed
		}
		managed[s.Name] = stored.Metadata.ManagedFields
		scales, checks := rec.take("/scale"), rec.take("/checked")
		if len(scales) != 1 || len(checks) != 1 {
			t.Fatalf("%s: one scale got %d mutating and %d validating reviews of deployments/scale", s.Name, len(scales), len(checks))
		}
		results[s.Name] = []scaleSeen{scaleSeenOf(scales[0]), scaleSeenOf(checks[0])}
		if n := len(rec.take("/main")); n != 0 {
			t.Errorf("%s: the webhook of deployments was called %d times for a write through deployments/scale", s.Name, n)
		}
	}
	rb, _ := json.Marshal(results[ref.Name])
	pb, _ := json.Marshal(results[sp.Name])
	for _, c := range difftest.Diff(difftest.DecodeJSON(rb), difftest.DecodeJSON(pb)) {
		t.Errorf("reviews %s: reference %v, setpoint %v", c.Path, c.Ref, c.SP)
	}
	mb, _ := json.Marshal(managed[ref.Name])
	if !strings.Contains(string(mb), `"subresource":"scale"`) {
		t.Errorf("the reference's managedFields have no entry of the scale subresource: %s", mb)
	}
	pm, _ := json.Marshal(managed[sp.Name])
	for _, c := range difftest.Diff(difftest.DecodeJSON(mb), difftest.DecodeJSON(pm)) {
		t.Errorf("managedFields %s: reference %v, setpoint %v", c.Path, c.Ref, c.SP)
	}
}
