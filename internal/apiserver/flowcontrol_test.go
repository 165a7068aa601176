package apiserver_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/setpoint-dev/setpoint/internal/apiserver"
	"github.com/setpoint-dev/setpoint/internal/testserver"
)

const fcPath = "/apis/flowcontrol.apiserver.k8s.io/v1"

// identity is a client of the server with its own bearer token.
type identity struct {
	s     *testserver.Server
	token string
}

func (id identity) do(t testing.TB, method, path, body string) (int, string, http.Header) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, id.s.URL+path, r)
	req.Header.Set("Authorization", "Bearer "+id.token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := id.s.Client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

// serviceAccount creates namespace ns (if needed) and ServiceAccount name
// in it, and returns an identity with a token from the TokenRequest API.
func serviceAccount(t testing.TB, s *testserver.Server, ns, name string) identity {
	t.Helper()
	admin := identity{s, s.Token}
	admin.do(t, http.MethodPost, "/api/v1/namespaces", fmt.Sprintf(`{"metadata":{"name":%q}}`, ns))
	if code, body, _ := admin.do(t, http.MethodPost, "/api/v1/namespaces/"+ns+"/serviceaccounts",
		fmt.Sprintf(`{"metadata":{"name":%q}}`, name)); code != http.StatusCreated {
		t.Fatalf("create service account: %d %s", code, body)
	}
	// (everything in its namespace: these tests are about flows, not
	// permissions)
	if code, body, _ := admin.do(t, http.MethodPost, "/apis/rbac.authorization.k8s.io/v1/namespaces/"+ns+"/rolebindings",
		fmt.Sprintf(`{"metadata":{"name":%q},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"cluster-admin"},
		"subjects":[{"kind":"ServiceAccount","name":%q,"namespace":%q}]}`, name, name, ns)); code != http.StatusCreated {
		t.Fatalf("bind service account: %d %s", code, body)
	}
	code, body, _ := admin.do(t, http.MethodPost, "/api/v1/namespaces/"+ns+"/serviceaccounts/"+name+"/token",
		`{"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","spec":{"expirationSeconds":3600}}`)
	if code != http.StatusCreated {
		t.Fatalf("token request: %d %s", code, body)
	}
	var tr struct {
		Status struct{ Token string } `json:"status"`
	}
	if err := json.Unmarshal([]byte(body), &tr); err != nil || tr.Status.Token == "" {
		t.Fatalf("token request answer %s: %v", body, err)
	}
	id := identity{s, tr.Status.Token}
	// The authorizer learns of the binding from its watch, a moment after
	// the create returned (as kube-apiserver's RBAC informer).
	waitFor(t, "the binding of "+ns+"/"+name+" is in effect", func() bool {
		code, _, _ := id.do(t, http.MethodGet, "/api/v1/namespaces/"+ns+"/serviceaccounts/"+name, "")
		return code == http.StatusOK
	})
	return id
}

// uidOf returns the uid of a flowcontrol object.
func uidOf(t testing.TB, s *testserver.Server, resource, name string) string {
	t.Helper()
	code, body, _ := identity{s, s.Token}.do(t, http.MethodGet, fcPath+"/"+resource+"/"+name, "")
	if code != http.StatusOK {
		t.Fatalf("get %s %s: %d %s", resource, name, code, body)
	}
	var o struct {
		Metadata struct{ UID string } `json:"metadata"`
	}
	_ = json.Unmarshal([]byte(body), &o)
	return o.Metadata.UID
}

// TestPriorityAndFairnessHeaders: responses name the FlowSchema and
// priority level of the request by uid, the admin is exempt, a
// ServiceAccount lands in service-accounts/workload-low, and the
// apiserver_flowcontrol_* metrics count them with the default seats.
func TestPriorityAndFairnessHeaders(t *testing.T) {
	s, _ := start(t, nil)
	sa := serviceAccount(t, s, "tenant", "app")
	checks := []struct {
		id     identity
		fs, pl string
	}{{identity{s, s.Token}, "exempt", "exempt"}, {sa, "service-accounts", "workload-low"}}
	for _, c := range checks {
		fsUID, plUID := uidOf(t, s, "flowschemas", c.fs), uidOf(t, s, "prioritylevelconfigurations", c.pl)
		waitFor(t, c.fs+" headers", func() bool {
			code, _, h := c.id.do(t, http.MethodGet, "/api/v1/namespaces/tenant/configmaps", "")
			return code == http.StatusOK && h.Get("X-Kubernetes-PF-FlowSchema-UID") == fsUID &&
				h.Get("X-Kubernetes-PF-PriorityLevel-UID") == plUID
		})
	}
	// A non-resource request is classified too.
	_, _, h := sa.do(t, http.MethodGet, "/version", "")
	if h.Get("X-Kubernetes-PF-FlowSchema-UID") != uidOf(t, s, "flowschemas", "service-accounts") {
		t.Errorf("/version headers %v", h)
	}
	m := metricsText(t, s)
	for _, want := range []string{
		`apiserver_flowcontrol_dispatched_requests_total{flow_schema="service-accounts",priority_level="workload-low"}`,
		`apiserver_flowcontrol_nominal_limit_seats{priority_level="workload-low"} 245`,
		`apiserver_flowcontrol_nominal_limit_seats{priority_level="catch-all"} 13`,
		`apiserver_flowcontrol_current_executing_requests{flow_schema="exempt",priority_level="exempt"} 1`,
		`apiserver_flowcontrol_request_wait_duration_seconds_bucket{execute="true",flow_schema="service-accounts",priority_level="workload-low",le="15"}`,
		`# HELP apiserver_flowcontrol_dispatched_requests_total [BETA] Number of requests executed by API Priority and Fairness subsystem`,
	} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// TestPriorityAndFairnessLive: a FlowSchema and priority level created
// through the API take effect at once; a request beyond the level's one
// seat gets kube-apiserver's 429 with Retry-After and the headers; the
// FlowSchema's Dangling condition follows its level's existence.
func TestPriorityAndFairnessLive(t *testing.T) {
	s, _ := start(t, func(c *apiserver.Config) { c.MaxReadInFlight, c.MaxMutatingInFlight = 1, 1 })
	admin := identity{s, s.Token}
	sa := serviceAccount(t, s, "jail", "app")
	fs := `{"metadata":{"name":"jail"},"spec":{"matchingPrecedence":50,"priorityLevelConfiguration":{"name":"tight"},
		"distinguisherMethod":{"type":"ByUser"},"rules":[{"subjects":[{"kind":"ServiceAccount","serviceAccount":{"namespace":"jail","name":"*"}}],
		"resourceRules":[{"verbs":["*"],"apiGroups":["*"],"resources":["*"],"namespaces":["*"],"clusterScope":true}]}]}}`
	if code, body, _ := admin.do(t, http.MethodPost, fcPath+"/flowschemas", fs); code != http.StatusCreated {
		t.Fatalf("create flowschema: %d %s", code, body)
	}
	dangling := func(status string) func() bool {
		return func() bool {
			_, body, _ := admin.do(t, http.MethodGet, fcPath+"/flowschemas/jail", "")
			return strings.Contains(body, `"type":"Dangling","status":"`+status+`"`)
		}
	}
	waitFor(t, "the FlowSchema is Dangling", dangling("True"))
	_, body, _ := admin.do(t, http.MethodGet, fcPath+"/flowschemas/jail", "")
	if !strings.Contains(body, `"reason":"NotFound","message":"This FlowSchema references the PriorityLevelConfiguration object named \"tight\" but there is no such object"`) {
		t.Errorf("dangling condition: %s", body)
	}
	pl := `{"metadata":{"name":"tight"},"spec":{"type":"Limited","limited":{"nominalConcurrencyShares":1,"limitResponse":{"type":"Reject"}}}}`
	if code, body, _ := admin.do(t, http.MethodPost, fcPath+"/prioritylevelconfigurations", pl); code != http.StatusCreated {
		t.Fatalf("create priority level: %d %s", code, body)
	}
	waitFor(t, "the FlowSchema is no longer Dangling", dangling("False"))
	fsUID, plUID := uidOf(t, s, "flowschemas", "jail"), uidOf(t, s, "prioritylevelconfigurations", "tight")
	waitFor(t, "requests go to the new level", func() bool {
		_, _, h := sa.do(t, http.MethodGet, "/api/v1/namespaces/jail/configmaps", "")
		return h.Get("X-Kubernetes-PF-FlowSchema-UID") == fsUID
	})

	// Hold the level's one seat with a create whose body never ends.
	pr, pw := io.Pipe()
	defer pw.Close()
	go func() {
		req, _ := http.NewRequest(http.MethodPost, s.URL+"/api/v1/namespaces/jail/configmaps", pr)
		req.Header.Set("Authorization", "Bearer "+sa.token)
		req.Header.Set("Content-Type", "application/json")
		if resp, err := s.Client.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	_, _ = pw.Write([]byte(`{"apiVersion":"v1",`))
	waitFor(t, "the held request executes", func() bool {
		return strings.Contains(metricsText(t, s), `apiserver_flowcontrol_current_executing_requests{flow_schema="jail",priority_level="tight"} 1`)
	})
	code, body, h := sa.do(t, http.MethodGet, "/api/v1/namespaces/jail/configmaps", "")
	if code != http.StatusTooManyRequests || body != "Too many requests, please try again later.\n" ||
		h.Get("Retry-After") != "1" || h.Get("Content-Type") != "text/plain; charset=utf-8" {
		t.Errorf("beyond the seat: %d %q %v", code, body, h)
	}
	if h.Get("X-Kubernetes-PF-FlowSchema-UID") != fsUID || h.Get("X-Kubernetes-PF-PriorityLevel-UID") != plUID {
		t.Errorf("429 headers: %v", h)
	}
	// Other levels are untouched: the admin is exempt, another
	// ServiceAccount has its own level.
	other := serviceAccount(t, s, "free", "app")
	if code, _, _ := other.do(t, http.MethodGet, "/api/v1/namespaces/free/configmaps", ""); code != http.StatusOK {
		t.Errorf("another tenant: %d", code)
	}
	if !strings.Contains(metricsText(t, s),
		`apiserver_flowcontrol_rejected_requests_total{flow_schema="jail",priority_level="tight",reason="concurrency-limit"} 1`) {
		t.Error("the rejection is not counted")
	}
	pw.Close()
	// Deleting the level makes the schema dangling: it no longer matches.
	admin.do(t, http.MethodDelete, fcPath+"/prioritylevelconfigurations/tight", "")
	waitFor(t, "the FlowSchema is Dangling again", dangling("True"))
	waitFor(t, "requests go back to service-accounts", func() bool {
		code, _, h := sa.do(t, http.MethodGet, "/api/v1/namespaces/jail/configmaps", "")
		return code == http.StatusOK && h.Get("X-Kubernetes-PF-FlowSchema-UID") == uidOf(t, s, "flowschemas", "service-accounts")
	})
}

// TestPriorityAndFairnessWatchSeat: a watch holds its seat only while it
// is set up; with a level of one seat, a watch that streams on leaves the
// seat to the next request.
func TestPriorityAndFairnessWatchSeat(t *testing.T) {
	s, _ := start(t, nil)
	admin := identity{s, s.Token}
	sa := serviceAccount(t, s, "watcher", "app")
	admin.do(t, http.MethodPost, fcPath+"/prioritylevelconfigurations",
		`{"metadata":{"name":"one"},"spec":{"type":"Limited","limited":{"nominalConcurrencyShares":1,"limitResponse":{"type":"Reject"}}}}`)
	admin.do(t, http.MethodPost, fcPath+"/flowschemas", `{"metadata":{"name":"watcher"},"spec":{"matchingPrecedence":50,
		"priorityLevelConfiguration":{"name":"one"},"rules":[{"subjects":[{"kind":"ServiceAccount","serviceAccount":{"namespace":"watcher","name":"*"}}],
		"resourceRules":[{"verbs":["*"],"apiGroups":["*"],"resources":["*"],"namespaces":["*"],"clusterScope":true}]}]}}`)
	fsUID := uidOf(t, s, "flowschemas", "watcher")
	waitFor(t, "the schema applies", func() bool {
		_, _, h := sa.do(t, http.MethodGet, "/api/v1/namespaces/watcher/configmaps", "")
		return h.Get("X-Kubernetes-PF-FlowSchema-UID") == fsUID
	})
	for i := range 3 {
		req, _ := http.NewRequest(http.MethodGet, s.URL+"/api/v1/namespaces/watcher/configmaps?watch=1", nil)
		req.Header.Set("Authorization", "Bearer "+sa.token)
		resp, err := s.Client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK || resp.Header.Get("X-Kubernetes-PF-FlowSchema-UID") != fsUID {
			t.Fatalf("watch %d: %d %v", i, resp.StatusCode, resp.Header)
		}
	}
	if code, _, _ := sa.do(t, http.MethodGet, "/api/v1/namespaces/watcher/configmaps", ""); code != http.StatusOK {
		t.Errorf("a list beside three open watches: %d", code)
	}
	if m := metricsText(t, s); !strings.Contains(m, `apiserver_flowcontrol_current_executing_requests{flow_schema="watcher",priority_level="one"} 0`) {
		t.Error("open watches still count as executing")
	}
}

// TestPriorityAndFairnessDisabled: --enable-priority-and-fairness=false
// keeps the plain limiter: no classification headers.
func TestPriorityAndFairnessDisabled(t *testing.T) {
	s, _ := start(t, func(c *apiserver.Config) { c.DisablePriorityAndFairness = true })
	code, _, h := identity{s, s.Token}.do(t, http.MethodGet, "/api/v1/namespaces/default/configmaps", "")
	if code != http.StatusOK || h.Get("X-Kubernetes-PF-FlowSchema-UID") != "" {
		t.Errorf("%d %v", code, h)
	}
	if strings.Contains(metricsText(t, s), "apiserver_flowcontrol_dispatched_requests_total") {
		t.Error("flowcontrol metrics without APF")
	}
}
