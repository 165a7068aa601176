package apiserver_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/setpoint-dev/setpoint/internal/apiserver"
	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/internal/testwait"
)

const deployPath = "/apis/apps/v1/namespaces/default/deployments"

func deployment(replicas, selector, label string) string {
	return `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"replicas":` + replicas +
		`,"selector":{"matchLabels":{"app":"` + selector + `"}},"template":{"metadata":{"labels":{"app":"` + label +
		`"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}`
}

// TestBadInput sends malformed or refused requests and checks each gets the
// right status code and reason, and that none of them changed the store.
// validContinue is a continue token that decodes (revision 1, from the
// first key).
var validContinue = base64.RawURLEncoding.EncodeToString([]byte(`{"v":"meta.k8s.io/v1","rv":1,"start":"a"}`))

func TestBadInput(t *testing.T) {
	s, kv := start(t, nil)
	createCM(t, s, "existing", map[string]string{"a": "1"})
	code, body, _ := s.Do(t, http.MethodGet, cmPath+"/existing", "", nil)
	if code != http.StatusOK {
		t.Fatal(code, string(body))
	}
	stale := decode[object](t, body)
	code, _, _ = s.Do(t, http.MethodPatch, cmPath+"/existing", "application/merge-patch+json", strings.NewReader(`{"data":{"a":"2"}}`))
	if code != http.StatusOK {
		t.Fatal("setup patch failed", code)
	}
	stale.Data = map[string]string{"a": "stale"}
	staleBody := string(mustJSON(t, stale))
	ctx := context.Background()
	before, err := kv.CurrentRevision(ctx)
	if err != nil {
		t.Fatal(err)
	}

	huge := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"huge"},"data":{"x":"` + strings.Repeat("x", 3<<20) + `"}}`
	cases := []struct {
		name, method, path, ctype, body, token string
		code                                   int
		reason, field                          string
	}{
		{"malformed JSON", "POST", cmPath, "application/json", `{"apiVersion":"v1","kind":`, "", 400, "BadRequest", ""},
		{"malformed YAML", "POST", cmPath, "application/yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: [name: x\n", "", 400, "BadRequest", ""},
		{"empty body", "POST", cmPath, "application/json", "", "", 400, "BadRequest", ""},
		{"kind does not match the URL", "POST", cmPath, "application/json", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"}}`, "", 400, "BadRequest", ""},
		{"group does not match the URL", "POST", cmPath, "application/json", `{"apiVersion":"apps/v1","kind":"ConfigMap","metadata":{"name":"p"}}`, "", 400, "BadRequest", ""},
		{"invalid name", "POST", cmPath, "application/json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"Bad_Name"}}`, "", 422, "Invalid", "metadata.name"},
		{"name too long", "POST", cmPath, "application/json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + strings.Repeat("a", 254) + `"}}`, "", 422, "Invalid", "metadata.name"},
		{"no name", "POST", cmPath, "application/json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{}}`, "", 422, "Invalid", "metadata.name"},
		{"namespace differs from URL", "POST", cmPath, "application/json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"kube-system"}}`, "", 400, "BadRequest", ""},
		{"already exists", "POST", cmPath, "application/json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"existing"}}`, "", 409, "AlreadyExists", ""},
		{"stale resourceVersion", "PUT", cmPath + "/existing", "application/json", staleBody, "", 409, "Conflict", ""},
		{"update of a missing object", "PUT", cmPath + "/nope", "application/json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"nope"}}`, "", 404, "NotFound", ""},
		{"body over 3 MiB", "POST", cmPath, "application/json", huge, "", 413, "RequestEntityTooLarge", ""},
		{"unknown resource", "GET", "/api/v1/namespaces/default/widgets", "", "", "", 404, "NotFound", ""},
		{"unknown version of a served group", "GET", "/apis/apps/v9/deployments", "", "", "", 404, "NotFound", ""},
		{"cluster-scoped kind under a namespace", "GET", "/api/v1/namespaces/default/nodes", "", "", "", 404, "NotFound", ""},
		{"missing token", "GET", cmPath, "", "", "-", 401, "Unauthorized", ""},
		{"wrong token", "GET", cmPath, "", "", "not-a-token", 401, "Unauthorized", ""},
		{"unsupported content type", "POST", cmPath, "text/plain", `x`, "", 415, "UnsupportedMediaType", ""},
		{"unsupported patch type", "PATCH", cmPath + "/existing", "application/json", `{}`, "", 415, "UnsupportedMediaType", ""},
		{"invalid JSON patch", "PATCH", cmPath + "/existing", "application/json-patch+json", `{"op":"add"}`, "", 400, "BadRequest", ""},
		{"JSON patch on a missing path", "PATCH", cmPath + "/existing", "application/json-patch+json", `[{"op":"replace","path":"/nope/x","value":1}]`, "", 422, "", ""},
		{"unknown field, strict", "POST", cmPath + "?fieldValidation=Strict", "application/json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"u"},"spec":{}}`, "", 400, "BadRequest", ""},
		{"bad fieldValidation", "POST", cmPath + "?fieldValidation=Loud", "application/json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"u"}}`, "", 422, "Invalid", "fieldValidation"},
		{"bad dryRun", "POST", cmPath + "?dryRun=Some", "application/json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"u"}}`, "", 422, "Invalid", "dryRun"},
		{"bad propagationPolicy", "DELETE", cmPath + "/existing?propagationPolicy=Sideways", "", "", "", 422, "Invalid", "propagationPolicy"},
		{"update with another uid", "PUT", cmPath + "/existing", "application/json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"existing","uid":"6b5c8f27-0000-4000-8000-000000000000"}}`, "", 409, "Conflict", ""},
		{"patch to another uid", "PATCH", cmPath + "/existing", "application/merge-patch+json", `{"metadata":{"uid":"6b5c8f27-0000-4000-8000-000000000000"}}`, "", 422, "Invalid", "metadata.uid"},
		{"negative replicas", "POST", deployPath, "application/json", deployment("-1", "web", "web"), "", 422, "Invalid", "spec.replicas"},
		{"selector does not match template", "POST", deployPath, "application/json", deployment("1", "web", "db"), "", 422, "Invalid", "spec.template.metadata.labels"},
		{"bad label selector", "GET", cmPath + "?labelSelector=a%3D%3D%3Db", "", "", "", 400, "BadRequest", ""},
		{"unsupported field selector", "GET", cmPath + "?fieldSelector=spec.nodeName%3Dx", "", "", "", 400, "BadRequest", ""},
		{"bad resourceVersion", "GET", cmPath + "?resourceVersion=abc", "", "", "", 400, "BadRequest", ""},
		{"resourceVersionMatch without resourceVersion", "GET", cmPath + "?resourceVersionMatch=Exact", "", "", "", 422, "Invalid", ""},
		{"resourceVersion too large", "GET", cmPath + "?resourceVersion=999999999&resourceVersionMatch=NotOlderThan", "", "", "", 504, "Timeout", ""},
		{"invalid continue token", "GET", cmPath + "?limit=1&continue=garbage", "", "", "", 400, "BadRequest", ""},
		{"continue token with a resourceVersion", "GET", cmPath + "?limit=1&resourceVersion=1&continue=" + validContinue, "", "", "", 400, "BadRequest", ""},
		{"POST to a named object", "POST", cmPath + "/existing", "application/json", `{}`, "", 405, "MethodNotAllowed", ""},
		{"delete precondition on uid", "DELETE", cmPath + "/existing", "application/json", `{"preconditions":{"uid":"not-the-uid"}}`, "", 409, "Conflict", ""},
		{"delete of the default namespace", "DELETE", "/api/v1/namespaces/default", "", "", "", 403, "Forbidden", ""},
		{"create in a missing namespace", "POST", "/api/v1/namespaces/nope/configmaps", "application/json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"}}`, "", 404, "NotFound", ""},
		{"not acceptable", "GET", cmPath, "", "", "", 406, "NotAcceptable", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, s.URL+tc.path, strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			switch tc.token {
			case "":
				req.Header.Set("Authorization", "Bearer "+s.Token)
			case "-":
			default:
				req.Header.Set("Authorization", "Bearer "+tc.token)
			}
			if tc.ctype != "" {
				req.Header.Set("Content-Type", tc.ctype)
			}
			if tc.reason == "NotAcceptable" {
				req.Header.Set("Accept", "text/html")
			}
			resp, err := s.Client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			st := decode[status](t, raw)
			if resp.StatusCode != tc.code || st.Code != tc.code || st.Kind != "Status" {
				t.Fatalf("got HTTP %d, Status code %d kind %q (%s), want %d", resp.StatusCode, st.Code, st.Kind, raw, tc.code)
			}
			if tc.reason != "" && st.Reason != tc.reason {
				t.Errorf("reason %q (%s), want %q", st.Reason, st.Message, tc.reason)
			}
			if tc.field != "" && !hasCause(st, tc.field) {
				t.Errorf("causes %+v do not name %s", st.Details.Causes, tc.field)
			}
			if tc.code == http.StatusGatewayTimeout && resp.Header.Get("Retry-After") == "" {
				t.Error("no Retry-After on a too-large resourceVersion")
			}
		})
	}
	after, err := kv.CurrentRevision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if after != before {
		t.Errorf("refused requests changed the store: revision %d -> %d", before, after)
	}
	code, body, _ = s.Do(t, http.MethodGet, cmPath+"/existing", "", nil)
	if got := decode[object](t, body); code != http.StatusOK || got.Data["a"] != "2" {
		t.Errorf("existing configmap after bad input: %d %v", code, got.Data)
	}
}

func hasCause(st status, f string) bool {
	for _, c := range st.Details.Causes {
		if c.Field == f {
			return true
		}
	}
	return false
}

// TestInflightLimit fills the one mutating slot with a request whose body
// never finishes, then checks that further writes get 429 with
// Retry-After while reads, watches and health checks still work: the
// plain limiter of a server without priority and fairness.
func TestInflightLimit(t *testing.T) {
	s, _ := start(t, func(c *apiserver.Config) { c.MaxMutatingInFlight, c.DisablePriorityAndFairness = 1, true })
	ch, code, _ := openWatch(t, s, cmPath+"?watch=1")
	if code != http.StatusOK {
		t.Fatal("watch", code)
	}
	pr, pw := io.Pipe()
	defer pw.Close()
	holding := make(chan struct{})
	go func() {
		req, _ := http.NewRequest(http.MethodPost, s.URL+cmPath, pr)
		req.Header.Set("Authorization", "Bearer "+s.Token)
		req.Header.Set("Content-Type", "application/json")
		close(holding)
		if resp, err := s.Client.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	<-holding
	_, _ = pw.Write([]byte(`{"apiVersion":"v1",`))
	// Wait until the server counts the held request in flight; nothing else
	// writes meanwhile, so the held request cannot have been refused.
	testwait.UntilEvery(t, 10*time.Second, 10*time.Millisecond, "the held request counted as in flight", testwait.Bool(func() bool {
		return strings.Contains(metricsText(t, s), `apiserver_current_inflight_requests{request_kind="mutating"} 1`)
	}))
	got, _, hdr := s.Do(t, http.MethodPost, cmPath, "application/json", bytes.NewReader([]byte(`{"metadata":{"name":"x"}}`)))
	if got != http.StatusTooManyRequests {
		t.Fatalf("write while the slot is held: %d, want 429", got)
	}
	if hdr.Get("Retry-After") == "" {
		t.Error("429 without Retry-After")
	}
	if code, _, _ := s.Do(t, http.MethodGet, cmPath, "", nil); code != http.StatusOK {
		t.Errorf("read while writes are saturated: %d", code)
	}
	if code, _, _ := s.Do(t, http.MethodGet, "/healthz", "", nil); code != http.StatusOK {
		t.Errorf("healthz while saturated: %d", code)
	}
	select {
	case ev := <-ch:
		t.Errorf("unexpected event %s", ev.Type)
	default:
	}
	_ = pw.CloseWithError(io.ErrUnexpectedEOF)
}

func metricsText(t testing.TB, s *testserver.Server) string {
	t.Helper()
	code, body, _ := s.Do(t, http.MethodGet, "/metrics", "", nil)
	if code != http.StatusOK {
		t.Fatalf("/metrics: %d", code)
	}
	return string(body)
}

// TestUnknownGroupIsPlainNotFound: a group the server does not serve has no
// handler in kube-apiserver, whose mux answers a plain-text 404.
func TestUnknownGroupIsPlainNotFound(t *testing.T) {
	s, _ := start(t, nil)
	code, body, hdr := s.Do(t, http.MethodGet, "/apis/example.com/v1/widgets", "", nil)
	if code != http.StatusNotFound || string(body) != "404 page not found\n" || !strings.HasPrefix(hdr.Get("Content-Type"), "text/plain") {
		t.Errorf("GET of an unknown group: %d %q (%s)", code, body, hdr.Get("Content-Type"))
	}
}
