package aggregator_test

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/internal/testwait"
)

func mustDo(t *testing.T, ts *testserver.Server, method, path, body string, want int) []byte {
	t.Helper()
	var code int
	var b []byte
	if body == "" {
		code, b, _ = ts.Do(t, method, path, "", nil)
	} else {
		code, b, _ = ts.Do(t, method, path, "application/json", strings.NewReader(body))
	}
	if code != want {
		t.Fatalf("%s %s: %d, want %d: %s", method, path, code, want, b)
	}
	return b
}

// setupService creates the namespace, the Service (port 443 "https" to
// targetPort) and, unless port is 0, an EndpointSlice with one endpoint
// at ip:port whose readiness is ready.
func setupService(t *testing.T, ts *testserver.Server, ip string, port int32, ready bool) {
	t.Helper()
	mustDo(t, ts, "POST", "/api/v1/namespaces", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"`+ns+`"}}`, http.StatusCreated)
	mustDo(t, ts, "POST", "/api/v1/namespaces/"+ns+"/services", `{"apiVersion":"v1","kind":"Service","metadata":{"name":"`+svcName+`"},
		"spec":{"ports":[{"name":"https","port":443,"targetPort":`+fmt.Sprint(port)+`}]}}`, http.StatusCreated)
	if port == 0 {
		return
	}
	mustDo(t, ts, "POST", "/apis/discovery.k8s.io/v1/namespaces/"+ns+"/endpointslices", `{"apiVersion":"discovery.k8s.io/v1","kind":"EndpointSlice",
		"metadata":{"name":"`+svcName+`-1","labels":{"kubernetes.io/service-name":"`+svcName+`"}},"addressType":"IPv4",
		"endpoints":[{"addresses":["`+ip+`"],"conditions":{"ready":`+fmt.Sprint(ready)+`}}],
		"ports":[{"name":"https","port":`+fmt.Sprint(port)+`,"protocol":"TCP"}]}`, http.StatusCreated)
}

// createAPIService registers the test group-version on the service, with
// caBundle (nil: insecureSkipTLSVerify).
func createAPIService(t *testing.T, ts *testserver.Server, caBundle []byte) {
	t.Helper()
	tls := `"insecureSkipTLSVerify":true`
	if caBundle != nil {
		tls = `"caBundle":"` + base64.StdEncoding.EncodeToString(caBundle) + `"`
	}
	mustDo(t, ts, "POST", "/apis/apiregistration.k8s.io/v1/apiservices", `{"apiVersion":"apiregistration.k8s.io/v1","kind":"APIService",
		"metadata":{"name":"`+version+`.`+group+`"},"spec":{"group":"`+group+`","version":"`+version+`",
		"groupPriorityMinimum":1000,"versionPriority":15,`+tls+`,"service":{"namespace":"`+ns+`","name":"`+svcName+`"}}}`, http.StatusCreated)
}

// waitCondition waits until the APIService's Available condition has
// status and reason, and returns it.
func waitCondition(t *testing.T, ts *testserver.Server, status apiregv1.ConditionStatus, reason string) apiregv1.APIServiceCondition {
	t.Helper()
	var last apiregv1.APIServiceCondition
	testwait.UntilEvery(t, 20*time.Second, 100*time.Millisecond, "APIService Available "+string(status)+" "+reason, func() error {
		var s apiregv1.APIService
		b := mustDo(t, ts, "GET", "/apis/apiregistration.k8s.io/v1/apiservices/"+version+"."+group, "", http.StatusOK)
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		for _, c := range s.Status.Conditions {
			if c.Type == apiregv1.Available {
				last = c
			}
		}
		if last.Status == status && last.Reason == reason {
			return nil
		}
		return fmt.Errorf("Available is %s %s (%q)", last.Status, last.Reason, last.Message)
	})
	return last
}

// TestProxy: an available APIService's group-version is proxied with the
// front-proxy certificate and the user's identity in X-Remote-* headers;
// the client's credentials do not reach the backend.
func TestProxy(t *testing.T) {
	t.Parallel()
	fp := frontProxy(t)
	ts := startServer(t, fp)
	be := startBackend(t, fp.CAFile)
	setupService(t, ts, hostIP(t), be.port, true)
	createAPIService(t, ts, be.caPEM)
	c := waitCondition(t, ts, apiregv1.ConditionTrue, "Passed")
	if c.Message != "all checks passed" {
		t.Errorf("message %q", c.Message)
	}
	check := be.lastFor(t, "/apis/"+group+"/"+version)
	if u := check.header.Get("X-Remote-User"); u != "system:kube-aggregator" || !slices.Contains(check.header.Values("X-Remote-Group"), "system:masters") {
		t.Errorf("discovery check as %q %q", u, check.header.Values("X-Remote-Group"))
	}

	path := "/apis/" + group + "/" + version + "/namespaces/" + ns + "/flunders"
	b := mustDo(t, ts, "GET", path+"?labelSelector=a%3Db&limit=5", "", http.StatusOK)
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil || got["method"] != "GET" || got["query"] != "labelSelector=a%3Db&limit=5" {
		t.Fatalf("proxied answer %s (%v)", b, err)
	}
	s := be.lastFor(t, "/apis/"+group+"/"+version+"/namespaces/"+ns+"/flunders")
	if s.peer != "front-proxy-client" {
		t.Errorf("client certificate %q, want front-proxy-client", s.peer)
	}
	if s.header.Get("Authorization") != "" {
		t.Error("the client's Authorization header reached the backend")
	}
	if u, g := s.header.Get("X-Remote-User"), s.header.Values("X-Remote-Group"); u == "" || !slices.Contains(g, "system:masters") || !slices.Contains(g, "system:authenticated") {
		t.Errorf("user headers %q %q", u, g)
	}
	for _, m := range []string{"POST", "PUT", "PATCH", "DELETE"} {
		code, b, _ := ts.Do(t, m, path+"/x", "application/json", strings.NewReader(`{}`))
		if m == "POST" {
			code, b, _ = ts.Do(t, m, path, "application/json", strings.NewReader(`{}`))
		}
		if code != http.StatusOK || !strings.Contains(string(b), `"method":"`+m+`"`) {
			t.Errorf("%s: %d %s", m, code, b)
		}
	}

	// Impersonation: the backend is told the impersonated user, and never
	// sees the Impersonate-* headers.
	impPath := "/apis/" + group + "/" + version + "/namespaces/imp/flunders"
	req, _ := http.NewRequest("GET", ts.URL+impPath, nil)
	req.Header.Set("Authorization", "Bearer "+ts.Token)
	req.Header.Set("Impersonate-User", "jane")
	req.Header.Add("Impersonate-Group", "wardens")
	req.Header.Add("Impersonate-Group", "system:masters") // authorized here to list flunders
	req.Header.Set("Impersonate-Extra-Scopes", "view")
	req.Header.Set("X-Remote-User", "mallory")
	resp, err := ts.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	s = be.lastFor(t, impPath)
	if s.header.Get("X-Remote-User") != "jane" || !slices.Contains(s.header.Values("X-Remote-Group"), "wardens") ||
		s.header.Get("X-Remote-Extra-Scopes") != "view" || s.header.Get("Impersonate-User") != "" {
		t.Errorf("impersonated request reached the backend with %v", s.header)
	}

	// Authorization happens here first: a user without rights is refused
	// without the backend being asked.
	n := be.count(path)
	mustDo(t, ts, "POST", "/api/v1/namespaces/"+ns+"/serviceaccounts", `{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"nobody"}}`, http.StatusCreated)
	code, b, _ := ts.As(ts.ServiceAccountToken(t, ns, "nobody")).Do(t, "GET", path, "", nil)
	if code != http.StatusForbidden || !strings.Contains(string(b), `flunders.`+group+` is forbidden`) {
		t.Errorf("unauthorized user: %d %s", code, b)
	}
	if be.count(path) != n {
		t.Error("the backend was asked for an unauthorized request")
	}
}

// TestWatchStreams: a proxied watch delivers each event as the backend
// sends it.
func TestWatchStreams(t *testing.T) {
	t.Parallel()
	fp := frontProxy(t)
	ts := startServer(t, fp)
	be := startBackend(t, fp.CAFile)
	setupService(t, ts, hostIP(t), be.port, true)
	createAPIService(t, ts, nil)
	waitCondition(t, ts, apiregv1.ConditionTrue, "Passed")
	req, _ := http.NewRequest("GET", ts.URL+"/apis/"+group+"/"+version+"/flunders?watch=true", nil)
	req.Header.Set("Authorization", "Bearer "+ts.Token)
	resp, err := ts.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	lines := bufio.NewScanner(resp.Body)
	for i := range 3 {
		ev := fmt.Sprintf(`{"type":"ADDED","object":{"metadata":{"name":"f%d"}}}`, i)
		select {
		case be.events <- ev:
		case <-time.After(10 * time.Second):
			t.Fatal("the backend's watch was not reached")
		}
		got := make(chan string, 1)
		go func() {
			if lines.Scan() {
				got <- lines.Text()
			}
			close(got)
		}()
		select {
		case line := <-got:
			if line != ev {
				t.Fatalf("event %d: %q", i, line)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("event %d not delivered while the watch is open", i)
		}
	}
}
