package webhook_test

import (
	"encoding/json"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/internal/webhookclient/webhooktest"
)

const cms = "/api/v1/namespaces/wh/configmaps"

func hasLabel(req *admissionv1.AdmissionRequest, key string) bool {
	for _, raw := range [][]byte{req.Object.Raw, req.OldObject.Raw} {
		var m metav1.PartialObjectMetadata
		if len(raw) > 0 && json.Unmarshal(raw, &m) == nil {
			if _, ok := m.Labels[key]; ok {
				return true
			}
		}
	}
	return false
}

func TestWebhooks(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	namespace(t, s, "wh")
	jp := admissionv1.PatchTypeJSONPatch
	hs := startHooks(t, map[string]answer{
		"/validate": func(req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
			if hasLabel(req, "deny") {
				return &admissionv1.AdmissionResponse{Result: &metav1.Status{Code: 403, Message: "no entry"}}
			}
			return &admissionv1.AdmissionResponse{Allowed: true, Warnings: []string{"careful"}, AuditAnnotations: map[string]string{"seen": "yes"}}
		},
		"/allow": allow,
		"/m1": func(req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
			seen := "false"
			if strings.Contains(string(req.Object.Raw), `"m2":"yes"`) {
				seen = "true"
			}
			return &admissionv1.AdmissionResponse{Allowed: true, PatchType: &jp,
				Patch: []byte(`[{"op":"add","path":"/metadata/annotations","value":{"seen-m2":"` + seen + `"}}]`)}
		},
		"/m2": func(req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
			return &admissionv1.AdmissionResponse{Allowed: true, PatchType: &jp, Patch: []byte(`[{"op":"add","path":"/metadata/labels/m2","value":"yes"}]`)}
		},
		"/denyall": func(req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
			return &admissionv1.AdmissionResponse{Result: &metav1.Status{Message: "everything is refused"}}
		},
	})
	sel := func(v string) string { return `,"objectSelector":{"matchLabels":{"route":"` + v + `"}}` }

	t.Run("validating", func(t *testing.T) {
		register(t, s, "ValidatingWebhookConfiguration", "wh-validate",
			webhookJSON("validate.example.com", hs.URL+"/validate", hs.CABundle, sel("validate")))
		eventually(t, "the webhook", func() bool {
			code, _, _ := do(t, s, "POST", cms+"?dryRun=All", configMap("probe", `"route":"validate","deny":"1"`))
			return code == 403
		})
		code, body, _ := do(t, s, "POST", cms, configMap("bad", `"route":"validate","deny":"1"`))
		st := status(t, body)
		if code != 403 || st.Message != `admission webhook "validate.example.com" denied the request: no entry` || st.Code != 403 {
			t.Errorf("denied create: %d %s", code, body)
		}
		mustDo(t, s, "GET", cms+"/bad", "", 404)

		code, body, h := do(t, s, "POST", cms, configMap("good", `"route":"validate"`))
		if code != 201 || !strings.Contains(strings.Join(h.Values("Warning"), ";"), "careful") {
			t.Fatalf("allowed create: %d %s warnings %q", code, body, h.Values("Warning"))
		}
		rv := hs.got("/validate")
		req := rv[len(rv)-1].Request
		if req.Kind != (metav1.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}) || req.Resource.Resource != "configmaps" ||
			req.Namespace != "wh" || req.Name != "good" || req.Operation != admissionv1.Create || req.DryRun == nil || *req.DryRun ||
			req.UserInfo.Username == "" || req.RequestKind == nil || req.OldObject.Raw != nil {
			t.Errorf("review request: %+v", req)
		}
		if !strings.Contains(string(req.Object.Raw), `"kind":"ConfigMap","apiVersion":"v1"`) || !strings.Contains(string(req.Options.Raw), `"kind":"CreateOptions"`) {
			t.Errorf("review object %s options %s", req.Object.Raw, req.Options.Raw)
		}
		// An update that adds the label is refused; the stored object stays.
		code, _, _ = do(t, s, "PUT", cms+"/good", configMap("good", `"route":"validate","deny":"1"`))
		if code != 403 {
			t.Errorf("denied update: %d", code)
		}
		if b := mustDo(t, s, "GET", cms+"/good", "", 200); strings.Contains(b, `"deny"`) {
			t.Errorf("store changed by a refused update: %s", b)
		}
		// Deletes go to validating webhooks too.
		mustDo(t, s, "POST", cms, configMap("keep", `"route":"validate"`), 201)
		hs.mu.Lock()
		hs.reviews["/validate"] = nil
		hs.mu.Unlock()
		mustDo(t, s, "DELETE", cms+"/keep", "", 200)
		if rv := hs.got("/validate"); len(rv) != 1 || rv[0].Request.Operation != admissionv1.Delete || rv[0].Request.OldObject.Raw == nil {
			t.Errorf("delete review: %d reviews", len(rv))
		}
	})

	t.Run("failure policy", func(t *testing.T) {
		wrong := webhooktest.NewCA(t)
		host := strings.TrimPrefix(hs.URL, "https://")
		modes := []struct{ mode, url, timeout, want string }{
			{"hang", hs.URL + "/hang", `,"timeoutSeconds":1`, `failed to call webhook: Post "https://` + host + `/hang?timeout=1s": context deadline exceeded`},
			{"garbage", hs.URL + "/garbage", "", "failed to call webhook: couldn't get version/kind; json parse error: json: cannot unmarshal string into Go value of type struct { APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; Kind string \"json:\\\"kind,omitempty\\\"\" }"},
			{"500", hs.URL + "/500", "", `failed to call webhook: an error on the server ("boom") has prevented the request from succeeding`},
			{"cert", hs.URL + "/allow", "", `failed to call webhook: Post "https://` + host + `/allow?timeout=10s": tls: failed to verify certificate: x509: certificate signed by unknown authority`},
		}
		var hooks []string
		for _, m := range modes {
			ca := hs.CABundle
			if m.mode == "cert" {
				ca = wrong.PEM
			}
			for _, p := range []string{"Fail", "Ignore"} {
				hooks = append(hooks, webhookJSON(m.mode+"-"+strings.ToLower(p)+".example.com", m.url, ca,
					sel(m.mode+"-"+p)+`,"failurePolicy":"`+p+`"`+m.timeout))
			}
		}
		register(t, s, "ValidatingWebhookConfiguration", "wh-failures", hooks...)
		eventually(t, "the webhooks", func() bool {
			code, _, _ := do(t, s, "POST", cms+"?dryRun=All", configMap("probe", `"route":"500-Fail"`))
			return code == 500
		})
		for _, m := range modes {
			name := "f-" + m.mode
			code, body, _ := do(t, s, "POST", cms, configMap(name, `"route":"`+m.mode+`-Fail"`))
			st := status(t, body)
			want := `Internal error occurred: failed calling webhook "` + m.mode + `-fail.example.com": ` + m.want
			if code != 500 || st.Reason != metav1.StatusReasonInternalError || st.Message != want {
				t.Errorf("%s Fail: %d %s\nwant %s", m.mode, code, st.Message, want)
			}
			mustDo(t, s, "GET", cms+"/"+name, "", 404)
			mustDo(t, s, "POST", cms, configMap("i-"+m.mode, `"route":"`+m.mode+`-Ignore"`), 201)
		}
	})

	t.Run("mutating and reinvocation", func(t *testing.T) {
		register(t, s, "MutatingWebhookConfiguration", "wh-mutate",
			webhookJSON("m1.example.com", hs.URL+"/m1", hs.CABundle, sel("mutate")+`,"reinvocationPolicy":"IfNeeded"`),
			webhookJSON("m2.example.com", hs.URL+"/m2", hs.CABundle, sel("mutate")))
		eventually(t, "the webhooks", func() bool {
			_, b, _ := do(t, s, "POST", cms+"?dryRun=All", configMap("probe", `"route":"mutate"`))
			return strings.Contains(b, `"m2":"yes"`)
		})
		before := len(hs.got("/m1"))
		b := mustDo(t, s, "POST", cms, configMap("mut", `"route":"mutate"`), 201)
		if !strings.Contains(b, `"m2":"yes"`) || !strings.Contains(b, `"seen-m2":"true"`) {
			t.Errorf("mutated object: %s", b)
		}
		if n := len(hs.got("/m1")) - before; n != 2 {
			t.Errorf("m1 called %d times, want 2 (reinvoked after m2's change)", n)
		}
		if b := mustDo(t, s, "GET", cms+"/mut", "", 200); !strings.Contains(b, `"seen-m2":"true"`) {
			t.Errorf("stored object: %s", b)
		}
	})

	t.Run("dry run", func(t *testing.T) {
		// admissionregistration/v1 allows only sideEffects None and
		// NoneOnDryRun, so the refusal of a dry run to a webhook with side
		// effects cannot be reached through the API; a dry run reaches
		// the webhook marked as one.
		register(t, s, "ValidatingWebhookConfiguration", "wh-dry",
			strings.Replace(webhookJSON("dry.example.com", hs.URL+"/allow", hs.CABundle, sel("dry")), `"None"`, `"NoneOnDryRun"`, 1))
		eventually(t, "the webhook", func() bool {
			mustDo(t, s, "POST", cms+"?dryRun=All", configMap("dry", `"route":"dry"`), 201)
			return len(hs.got("/allow")) > 0
		})
		rv := hs.got("/allow")
		if req := rv[len(rv)-1].Request; req.DryRun == nil || !*req.DryRun || !strings.Contains(string(req.Options.Raw), `"dryRun":["All"]`) {
			t.Errorf("dry-run review: %+v", req)
		}
		mustDo(t, s, "GET", cms+"/dry", "", 404)
	})

	t.Run("match conditions", func(t *testing.T) {
		cond := `,"matchConditions":[{"name":"prefix","expression":"object.metadata.name.startsWith('cel-')"}]`
		broken := `,"matchConditions":[{"name":"missing","expression":"object.metadata.labels['missing'] == 'x'"}]`
		register(t, s, "ValidatingWebhookConfiguration", "wh-cel",
			webhookJSON("cel.example.com", hs.URL+"/denyall", hs.CABundle, sel("cel")+cond),
			webhookJSON("broken.example.com", hs.URL+"/denyall", hs.CABundle, sel("broken")+broken))
		eventually(t, "the webhook", func() bool {
			code, _, _ := do(t, s, "POST", cms+"?dryRun=All", configMap("cel-probe", `"route":"cel"`))
			return code == 400
		})
		mustDo(t, s, "POST", cms, configMap("plain", `"route":"cel"`), 201)
		code, body, _ := do(t, s, "POST", cms, configMap("cel-x", `"route":"cel"`))
		if st := status(t, body); code != 400 || st.Message != `admission webhook "cel.example.com" denied the request: everything is refused` {
			t.Errorf("matched: %d %s", code, body)
		}
		code, body, _ = do(t, s, "POST", cms, configMap("b", `"route":"broken"`))
		want := `configmaps "b" is forbidden: expression 'object.metadata.labels['missing'] == 'x'' resulted in error: no such key: missing`
		if st := status(t, body); code != 403 || st.Message != want {
			t.Errorf("condition error: %d %s\nwant %s", code, st.Message, want)
		}
		mustDo(t, s, "GET", cms+"/b", "", 404)
	})

	t.Run("exempt resources", func(t *testing.T) {
		all := `{"name":"all.example.com","clientConfig":{"url":"` + hs.URL + `/denyall","caBundle":` + mustJSON(hs.CABundle) + `},
			"rules":[{"operations":["*"],"apiGroups":["*"],"apiVersions":["*"],"resources":["*/*"]}],"sideEffects":"None","admissionReviewVersions":["v1"]}`
		register(t, s, "ValidatingWebhookConfiguration", "wh-all", all)
		eventually(t, "the webhook", func() bool {
			code, _, _ := do(t, s, "POST", cms+"?dryRun=All", configMap("probe", ""))
			return code == 400
		})
		mustDo(t, s, "POST", "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations?dryRun=All",
			`{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingWebhookConfiguration","metadata":{"name":"x"}}`, 201)
		mustDo(t, s, "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
			`{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview","spec":{"resourceAttributes":{"verb":"get","resource":"pods"}}}`, 201)
		mustDo(t, s, "DELETE", "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/wh-all", "", 200)
	})
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
