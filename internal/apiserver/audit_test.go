package apiserver_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/setpoint-dev/setpoint/internal/apiserver"
	"github.com/setpoint-dev/setpoint/internal/audit"
	"github.com/setpoint-dev/setpoint/internal/authorizer"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/testserver"
)

// auditTestPolicy gives each namespace of the tests a level.
const auditTestPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- level: RequestResponse
  namespaces: ["rr"]
- level: RequestResponse
  namespaces: ["omf"]
  omitManagedFields: true
- level: Request
  namespaces: ["req"]
- level: Metadata
  namespaces: ["meta"]
- level: Metadata
  namespaces: ["omit"]
  omitStages: ["RequestReceived"]
- level: Metadata
  nonResourceURLs: ["/version"]
- level: RequestResponse
  resources:
  - group: authorization.k8s.io
- level: None
`

// startAudited runs a server auditing to a log file under policy.
func startAudited(t *testing.T, policy, mode, logPath string) *testserver.Server {
	t.Helper()
	p := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(p, []byte(policy), 0o600); err != nil {
		t.Fatal(err)
	}
	// MaxSize 0: one plain file (rotation is the audit package's test).
	return testserver.Start(t, testserver.Options{Audit: audit.Options{PolicyFile: p, LogPath: logPath, Mode: mode}})
}

// call sends a request as token (the admin's when empty) and returns the
// code, the body and the Audit-Id answered.
func call(t *testing.T, s *testserver.Server, token, method, path, body string, header ...string) (int, string, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, s.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if token == "" {
		token = s.Token
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	if method == http.MethodPatch {
		req.Header.Set("Content-Type", "application/merge-patch+json")
	}
	req.Header.Set("User-Agent", "audit-test/1.0")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := s.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header.Get("Audit-Id")
}

// auditLog reads the events of a stopped server's log, by audit ID.
func auditLog(t *testing.T, path string) map[string][]audit.Event {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][]audit.Event{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 8<<20)
	for sc.Scan() {
		var ev audit.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		out[ev.AuditID] = append(out[ev.AuditID], ev)
	}
	return out
}

func stages(evs []audit.Event) string {
	var s []string
	for _, ev := range evs {
		s = append(s, string(ev.Stage))
	}
	return strings.Join(s, ",")
}

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

func TestAuditIDHeaderOnEveryResponse(t *testing.T) {
	s := testserver.Start(t, testserver.Options{}) // no auditing configured
	for _, c := range []struct{ token, path string }{
		{"", "/api/v1/namespaces"}, {"", "/api/v1/namespaces/default/configmaps/missing"},
		{"wrong", "/api/v1/namespaces"}, {"", "/version"}, {"", "/apis"},
	} {
		code, _, id := call(t, s, c.token, http.MethodGet, c.path, "")
		if !uuidRE.MatchString(id) {
			t.Errorf("GET %s (%d): Audit-Id %q, want a UUID", c.path, code, id)
		}
	}
	if _, _, id := call(t, s, "", http.MethodGet, "/version", "", "Audit-ID", "mine-42"); id != "mine-42" {
		t.Errorf("Audit-Id %q, want the client's mine-42 echoed", id)
	}
}

func TestAuditEventsByLevel(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "audit", "audit.log")
	s := startAudited(t, auditTestPolicy, audit.ModeBlocking, logPath)
	ids := map[string]map[string]string{} // namespace → step → audit ID
	for _, ns := range []string{"rr", "omf", "req", "meta", "omit", "none"} {
		if code, body, _ := call(t, s, "", http.MethodPost, "/api/v1/namespaces", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"`+ns+`"}}`); code != http.StatusCreated {
			t.Fatalf("namespace %s: %d %s", ns, code, body)
		}
		p := "/api/v1/namespaces/" + ns + "/configmaps"
		steps := map[string]string{}
		expect := func(step string, want int, method, path, body string) {
			t.Helper()
			code, out, id := call(t, s, "", method, path, body)
			if code != want {
				t.Fatalf("%s %s: %d %s", ns, step, code, out)
			}
			steps[step] = id
		}
		expect("create", http.StatusCreated, http.MethodPost, p, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"a":"1"}}`)
		expect("get", http.StatusOK, http.MethodGet, p+"/c", "")
		expect("list", http.StatusOK, http.MethodGet, p+"?fieldSelector=metadata.name%3Dc", "")
		expect("patch", http.StatusOK, http.MethodPatch, p+"/c", `{"data":{"b":"2"}}`)
		expect("watch", http.StatusOK, http.MethodGet, p+"?watch=1&timeoutSeconds=1", "")
		expect("missing", http.StatusNotFound, http.MethodGet, p+"/missing", "")
		expect("invalid", http.StatusUnprocessableEntity, http.MethodPost, p, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"Bad_Name"}}`)
		expect("delete", http.StatusOK, http.MethodDelete, p+"/c", `{"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Background"}`)
		_, _, steps["unauthenticated"] = call(t, s, "wrong", http.MethodGet, p, "")
		ids[ns] = steps
	}
	_, _, versionID := call(t, s, "", http.MethodGet, "/version", "")
	code, body, reviewID := call(t, s, "", http.MethodPost, "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
		`{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview","spec":{"resourceAttributes":{"verb":"get","resource":"pods"}}}`)
	if code != http.StatusCreated {
		t.Fatalf("review: %d %s", code, body)
	}
	dep := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"selector":{"matchLabels":{"a":"b"}},` +
		`"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i"}]}}}}`
	code, body, depID := call(t, s, "", http.MethodPost, "/apis/apps/v1/namespaces/req/deployments", dep)
	if code != http.StatusCreated {
		t.Fatalf("deployment: %d %s", code, body)
	}
	code, body, scaleID := call(t, s, "", http.MethodPut, "/apis/apps/v1/namespaces/req/deployments/d/scale",
		`{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"d","namespace":"req"},"spec":{"replicas":3}}`)
	if code != http.StatusOK {
		t.Fatalf("scale: %d %s", code, body)
	}
	s.Stop(t) // a clean stop: every event is written
	log := auditLog(t, logPath)
	// A created object is recorded with its defaults, as kube-apiserver
	// records it once decoded.
	if d := log[depID]; len(d) != 2 || !strings.Contains(string(d[1].RequestObject), `"terminationMessagePath":"/dev/termination-log"`) {
		t.Errorf("deployment events %+v", d)
	}
	if sc := log[scaleID]; len(sc) != 2 || !strings.Contains(string(sc[1].RequestObject), `"kind":"Scale"`) ||
		sc[1].ObjectRef.Subresource != "scale" || sc[1].ObjectRef.Name != "d" || sc[1].ObjectRef.APIGroup != "apps" {
		t.Errorf("scale events %+v", sc)
	}
	if r := log[reviewID]; len(r) != 2 || !strings.Contains(string(r[1].RequestObject), `"verb":"get"`) ||
		!strings.Contains(string(r[1].ResponseObject), `"allowed":true`) || r[1].ObjectRef.Resource != "selfsubjectaccessreviews" {
		t.Errorf("review events %+v", r)
	}

	// Level None: nothing at all; the namespaces' own creation matched no rule.
	for step, id := range ids["none"] {
		if len(log[id]) != 0 {
			t.Errorf("none %s: %d events", step, len(log[id]))
		}
	}
	for _, ns := range []string{"rr", "omf", "req", "meta", "omit"} {
		checkLevel(t, ns, ids[ns], log)
	}
	v := log[versionID]
	if stages(v) != "RequestReceived,ResponseComplete" || v[1].ObjectRef != nil || v[1].Verb != "get" ||
		v[1].RequestURI != "/version" || v[1].ResponseStatus.Code != 200 || v[1].Level != audit.LevelMetadata {
		t.Errorf("/version events %+v", v)
	}
}

// checkLevel checks the events of one namespace's steps at its level.
func checkLevel(t *testing.T, ns string, steps map[string]string, log map[string][]audit.Event) {
	t.Helper()
	level := map[string]audit.Level{"rr": audit.LevelRequestResponse, "omf": audit.LevelRequestResponse,
		"req": audit.LevelRequest, "meta": audit.LevelMetadata, "omit": audit.LevelMetadata}[ns]
	received := "RequestReceived,"
	if ns == "omit" {
		received = ""
	}
	want := map[string]string{
		"create": received + "ResponseComplete", "get": received + "ResponseComplete", "list": received + "ResponseComplete",
		"patch": received + "ResponseComplete", "watch": received + "ResponseStarted,ResponseComplete",
		"missing": received + "ResponseComplete", "invalid": received + "ResponseComplete", "delete": received + "ResponseComplete",
		"unauthenticated": "ResponseStarted",
	}
	for step, id := range steps {
		evs := log[id]
		if got := stages(evs); got != want[step] {
			t.Errorf("%s %s: stages %q, want %q", ns, step, got, want[step])
			continue
		}
		last := evs[len(evs)-1]
		if last.Level != level || last.AuditID != id || last.UserAgent != "audit-test/1.0" || len(last.SourceIPs) != 1 || last.SourceIPs[0] != "127.0.0.1" {
			t.Errorf("%s %s: event %+v", ns, step, last)
		}
		if step != "unauthenticated" && (last.User.Username != "setpoint-admin" || !strings.Contains(strings.Join(last.User.Groups, ","), "system:masters")) {
			t.Errorf("%s %s: user %+v", ns, step, last.User)
		}
		if ref := last.ObjectRef; ref == nil || ref.Namespace != ns || ref.Resource != "configmaps" || ref.APIVersion != "v1" {
			t.Errorf("%s %s: objectRef %+v", ns, step, last.ObjectRef)
		}
		hasReq, hasResp := len(last.RequestObject) > 0, len(last.ResponseObject) > 0
		wantReq := !level.Less(audit.LevelRequest) && (step == "create" || step == "patch" || step == "invalid" || step == "delete")
		wantResp := level == audit.LevelRequestResponse && step != "watch"
		if hasReq != wantReq || hasResp != wantResp {
			t.Errorf("%s %s: requestObject %v responseObject %v, want %v %v", ns, step, hasReq, hasResp, wantReq, wantResp)
		}
	}
	checkDetails(t, ns, level, steps, log)
}

// checkDetails checks what each kind of request records.
func checkDetails(t *testing.T, ns string, level audit.Level, steps map[string]string, log map[string][]audit.Event) {
	t.Helper()
	last := func(step string) audit.Event { evs := log[steps[step]]; return evs[len(evs)-1] }
	create := last("create")
	if create.Verb != "create" || create.ObjectRef.Name != "c" || create.ResponseStatus.Code != 201 {
		t.Errorf("%s create: %+v", ns, create)
	}
	if list := last("list"); list.Verb != "list" || list.ObjectRef.Name != "c" {
		t.Errorf("%s list by metadata.name: verb %s, objectRef %+v", ns, list.Verb, list.ObjectRef)
	}
	if w := log[steps["watch"]]; w[len(w)-2].ResponseStatus.Code != 200 || w[len(w)-1].Verb != "watch" {
		t.Errorf("%s watch: %+v", ns, w)
	}
	miss := last("missing")
	if st := miss.ResponseStatus; st.Code != 404 || st.Reason != "NotFound" || st.Status != "Failure" ||
		st.Message != `configmaps "missing" not found` || st.Details == nil || st.Details.Name != "missing" {
		t.Errorf("%s missing: responseStatus %+v", ns, miss.ResponseStatus)
	}
	if inv := last("invalid"); inv.ResponseStatus.Code != 422 || inv.ResponseStatus.Reason != "Invalid" || inv.ObjectRef.Name != "Bad_Name" {
		t.Errorf("%s invalid: %+v %+v", ns, inv.ResponseStatus, inv.ObjectRef)
	}
	del := last("delete")
	if st := del.ResponseStatus; st.Code != 200 || st.Status != "Success" || st.Details == nil || st.Details.UID == "" {
		t.Errorf("%s delete: responseStatus %+v", ns, del.ResponseStatus)
	}
	un := log[steps["unauthenticated"]][0]
	if un.User.Username != "" || un.ResponseStatus.Code != 401 || un.ResponseStatus.Reason != "Unauthorized" || un.Verb != "list" {
		t.Errorf("%s unauthenticated: %+v", ns, un)
	}
	if level.Less(audit.LevelRequest) {
		return
	}
	if !strings.Contains(string(create.RequestObject), `"kind":"ConfigMap"`) || !strings.Contains(string(create.RequestObject), `"a":"1"`) {
		t.Errorf("%s create requestObject %s", ns, create.RequestObject)
	}
	if got := string(last("patch").RequestObject); got != `{"data":{"b":"2"}}` {
		t.Errorf("%s patch requestObject %s", ns, got)
	}
	if got := string(del.RequestObject); got != `{"kind":"DeleteOptions","apiVersion":"meta.k8s.io/__internal","propagationPolicy":"Background"}` {
		t.Errorf("%s delete requestObject %s", ns, got)
	}
	if level != audit.LevelRequestResponse {
		return
	}
	resp := string(create.ResponseObject)
	if !strings.Contains(resp, `"uid":"`) || strings.Contains(resp, "managedFields") != (ns == "rr") {
		t.Errorf("%s create responseObject (managedFields kept only in rr): %s", ns, resp)
	}
	if got := string(miss.ResponseObject); !strings.Contains(got, `"kind":"Status"`) || !strings.Contains(got, `"code":404`) {
		t.Errorf("%s missing responseObject %s", ns, got)
	}
}

func TestAuditStrictModeRefusesWhatItCannotRecord(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Fatalf("this test writes the log to /dev/full: %v", err)
	}
	const creates = "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n  verbs: [create]\n  namespaces: [meta]\n"
	s := startAudited(t, creates, audit.ModeBlockingStrict, "/dev/full")
	code, body, _ := call(t, s, "", http.MethodPost, "/api/v1/namespaces", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"meta"}}`)
	if code != http.StatusCreated { // the policy says None: nothing to write
		t.Fatalf("namespace: %d %s", code, body)
	}
	code, body, _ = call(t, s, "", http.MethodPost, "/api/v1/namespaces/meta/configmaps", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}`)
	if code != http.StatusInternalServerError || !strings.Contains(body, "failed to store audit event") {
		t.Fatalf("create with an unwritable log: %d %s", code, body)
	}
	// The refused create wrote nothing (reads are not audited).
	code, body, _ = call(t, s, "", http.MethodGet, "/api/v1/namespaces/meta/configmaps", "")
	if code != http.StatusOK || strings.Contains(body, `"name":"c"`) {
		t.Fatalf("after the refusal: %d %s", code, body)
	}
	// blocking (the default): the same failure is logged, not refused.
	b := startAudited(t, creates, audit.ModeBlocking, "/dev/full")
	call(t, b, "", http.MethodPost, "/api/v1/namespaces", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"meta"}}`)
	if code, body, _ := call(t, b, "", http.MethodPost, "/api/v1/namespaces/meta/configmaps", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}`); code != http.StatusCreated {
		t.Fatalf("blocking mode with an unwritable log: %d %s", code, body)
	}
}

func TestAuditAttributesAsKubeAPIServer(t *testing.T) {
	type attrs = authorizer.Attributes
	cases := []struct {
		method, url string
		want        attrs
	}{
		{"GET", "/api/v1/namespaces", attrs{Verb: "list", ResourceRequest: true, APIVersion: "v1", Resource: "namespaces"}},
		{"GET", "/api/v1/namespaces/foo", attrs{Verb: "get", ResourceRequest: true, APIVersion: "v1", Resource: "namespaces", Namespace: "foo", Name: "foo"}},
		{"PUT", "/api/v1/namespaces/foo/finalize", attrs{Verb: "update", ResourceRequest: true, APIVersion: "v1", Resource: "namespaces", Namespace: "foo", Name: "foo", Subresource: "finalize"}},
		{"GET", "/api/v1/namespaces/foo/pods", attrs{Verb: "list", ResourceRequest: true, APIVersion: "v1", Resource: "pods", Namespace: "foo"}},
		{"GET", "/api/v1/watch/namespaces/foo/pods", attrs{Verb: "watch", ResourceRequest: true, APIVersion: "v1", Resource: "pods", Namespace: "foo"}},
		{"GET", "/api/v1/namespaces/foo/pods?watch=true", attrs{Verb: "watch", ResourceRequest: true, APIVersion: "v1", Resource: "pods", Namespace: "foo"}},
		{"GET", "/api/v1/namespaces/foo/pods?watch=false", attrs{Verb: "list", ResourceRequest: true, APIVersion: "v1", Resource: "pods", Namespace: "foo"}},
		{"GET", "/api/v1/pods?fieldSelector=metadata.name%3Dbar", attrs{Verb: "list", ResourceRequest: true, APIVersion: "v1", Resource: "pods", Name: "bar"}},
		{"DELETE", "/apis/apps/v1/namespaces/foo/deployments", attrs{Verb: "deletecollection", ResourceRequest: true, APIGroup: "apps", APIVersion: "v1", Resource: "deployments", Namespace: "foo"}},
		{"POST", "/api/v1/namespaces/foo/pods/p/eviction", attrs{Verb: "create", ResourceRequest: true, APIVersion: "v1", Resource: "pods", Namespace: "foo", Name: "p", Subresource: "eviction"}},
		{"GET", "/api/v1/namespaces/foo/pods/p/proxy/a/b", attrs{Verb: "get", ResourceRequest: true, APIVersion: "v1", Resource: "pods", Namespace: "foo", Name: "p", Subresource: "proxy"}},
		{"GET", "/api/v1/proxy/namespaces/foo/pods/p/a", attrs{Verb: "proxy", ResourceRequest: true, APIVersion: "v1", Resource: "pods", Namespace: "foo", Name: "p"}},
		{"PATCH", "/apis/apps/v1/namespaces/foo/deployments/d/scale", attrs{Verb: "patch", ResourceRequest: true, APIGroup: "apps", APIVersion: "v1", Resource: "deployments", Namespace: "foo", Name: "d", Subresource: "scale"}},
		{"GET", "/apis/apps/v1", attrs{Verb: "get", Path: "/apis/apps/v1"}},
		{"GET", "/api", attrs{Verb: "get", Path: "/api"}},
		{"POST", "/healthz", attrs{Verb: "post", Path: "/healthz"}},
		{"GET", "/openapi/v3/apis/apps/v1", attrs{Verb: "get", Path: "/openapi/v3/apis/apps/v1"}},
	}
	for _, c := range cases {
		r, _ := http.NewRequest(c.method, "https://x"+c.url, nil)
		got := apiserver.AuditAttributes(r, registry.UserInfo{})
		want := c.want
		if !want.ResourceRequest && want.Path == "" {
			want.Path = r.URL.Path
		}
		if want.ResourceRequest {
			want.Path = r.URL.Path
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s %s:\n got  %+v\n want %+v", c.method, c.url, got, want)
		}
	}
}
