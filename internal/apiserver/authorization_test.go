package apiserver_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/setpoint-dev/setpoint/internal/apiserver"
	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/internal/testwait"
)

const aliceName = "system:serviceaccount:default:alice"

// forbiddenBody is kube-apiserver's 403 Status for a refused request.
func forbiddenBody(message string, details map[string]string) map[string]any {
	d := map[string]any{}
	for k, v := range details {
		d[k] = v
	}
	return map[string]any{"kind": "Status", "apiVersion": "v1", "metadata": map[string]any{}, "status": "Failure",
		"message": message, "reason": "Forbidden", "details": d, "code": float64(403)}
}

func expectJSON(t *testing.T, what string, code int, body []byte, wantCode int, want map[string]any) {
	t.Helper()
	var got map[string]any
	if err := json.Unmarshal(body, &got); err != nil || code != wantCode {
		t.Fatalf("%s: %d %s (%v); want %d", what, code, body, err, wantCode)
	}
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if string(g) != string(w) {
		t.Errorf("%s:\n got %s\nwant %s", what, g, w)
	}
}

// eventually retries check until it passes or 10 s pass: the authorizer
// sees bindings through the watch caches, a moment after they are written.
func eventually(t *testing.T, what string, check func() (bool, string)) {
	t.Helper()
	testwait.UntilEvery(t, 10*time.Second, 20*time.Millisecond, what, testwait.Check(check))
}

func create(t *testing.T, s *testserver.Server, path, body string) {
	t.Helper()
	if code, b, _ := s.Do(t, "POST", path, "application/json", strings.NewReader(body)); code != http.StatusCreated {
		t.Fatalf("POST %s: %d %s", path, code, b)
	}
}

// TestForbiddenWording checks the 403 of every shape of request against
// what kube-apiserver v1.37 answers a service account without bindings
// (recorded on the reference): resource requests namespaced and cluster
// wide, named, with subresources and groups, a namespace's own path, watch
// by parameter and by path, a list by metadata.name, non-resource paths.
func TestForbiddenWording(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	alice := s.As(s.ServiceAccountToken(t, "default", "alice"))
	u := `User "` + aliceName + `" cannot `
	for _, tc := range []struct {
		method, path string
		message      string
		details      map[string]string
	}{
		{"GET", "/api/v1/namespaces/default/pods", `pods is forbidden: ` + u + `list resource "pods" in API group "" in the namespace "default"`, map[string]string{"kind": "pods"}},
		{"GET", "/api/v1/pods", `pods is forbidden: ` + u + `list resource "pods" in API group "" at the cluster scope`, map[string]string{"kind": "pods"}},
		{"GET", "/api/v1/namespaces/default/pods/x/log", `pods "x" is forbidden: ` + u + `get resource "pods/log" in API group "" in the namespace "default"`, map[string]string{"name": "x", "kind": "pods"}},
		{"GET", "/apis/apps/v1/namespaces/default/deployments/x", `deployments.apps "x" is forbidden: ` + u + `get resource "deployments" in API group "apps" in the namespace "default"`, map[string]string{"name": "x", "group": "apps", "kind": "deployments"}},
		{"PUT", "/apis/apps/v1/namespaces/default/deployments/x/scale", `deployments.apps "x" is forbidden: ` + u + `update resource "deployments/scale" in API group "apps" in the namespace "default"`, map[string]string{"name": "x", "group": "apps", "kind": "deployments"}},
		{"GET", "/api/v1/nodes/n1/proxy/foo", `nodes "n1" is forbidden: ` + u + `get resource "nodes/proxy" in API group "" at the cluster scope`, map[string]string{"name": "n1", "kind": "nodes"}},
		{"GET", "/api/v1/namespaces/ns1", `namespaces "ns1" is forbidden: ` + u + `get resource "namespaces" in API group "" in the namespace "ns1"`, map[string]string{"name": "ns1", "kind": "namespaces"}},
		{"PUT", "/api/v1/namespaces/ns1/finalize", `namespaces "ns1" is forbidden: ` + u + `update resource "namespaces/finalize" in API group "" in the namespace "ns1"`, map[string]string{"name": "ns1", "kind": "namespaces"}},
		{"GET", "/api/v1/namespaces/default/pods?watch=true", `pods is forbidden: ` + u + `watch resource "pods" in API group "" in the namespace "default"`, map[string]string{"kind": "pods"}},
		{"GET", "/api/v1/watch/namespaces/default/pods", `pods is forbidden: ` + u + `watch resource "pods" in API group "" in the namespace "default"`, map[string]string{"kind": "pods"}},
		{"GET", "/api/v1/namespaces/default/pods?fieldSelector=metadata.name%3Dp", `pods "p" is forbidden: ` + u + `list resource "pods" in API group "" in the namespace "default"`, map[string]string{"name": "p", "kind": "pods"}},
		{"DELETE", "/api/v1/namespaces/default/configmaps", `configmaps is forbidden: ` + u + `deletecollection resource "configmaps" in API group "" in the namespace "default"`, map[string]string{"kind": "configmaps"}},
		{"POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", `clusterroles.rbac.authorization.k8s.io is forbidden: ` + u + `create resource "clusterroles" in API group "rbac.authorization.k8s.io" at the cluster scope`, map[string]string{"group": "rbac.authorization.k8s.io", "kind": "clusterroles"}},
		{"GET", "/foo", `forbidden: ` + u + `get path "/foo"`, nil},
		{"GET", "/metrics", `forbidden: ` + u + `get path "/metrics"`, nil},
		{"POST", "/api/v1", `forbidden: ` + u + `post path "/api/v1"`, nil},
	} {
		code, body, _ := alice.Do(t, tc.method, tc.path, "application/json", strings.NewReader("{}"))
		expectJSON(t, tc.method+" "+tc.path, code, body, http.StatusForbidden, forbiddenBody(tc.message, tc.details))
	}
	// The public paths stay open without credentials.
	resp, err := s.Client.Get(s.URL + "/healthz")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("anonymous /healthz: %v %v", resp, err)
	}
	resp.Body.Close()
}

// TestRBACGrants checks that bindings take effect on requests (and their
// removal), that a binding to a missing role adds kube-apiserver's
// evaluation error to the 403, and that the admin (system:masters) is
// allowed without any binding.
func TestRBACGrants(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	alice := s.As(s.ServiceAccountToken(t, "default", "alice"))
	const rbac = "/apis/rbac.authorization.k8s.io/v1"
	create(t, s, rbac+"/namespaces/default/roles", `{"metadata":{"name":"cm-reader"},"rules":[{"verbs":["get","list"],"apiGroups":[""],"resources":["configmaps"]}]}`)
	create(t, s, rbac+"/namespaces/default/rolebindings", `{"metadata":{"name":"alice-cm"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"cm-reader"},"subjects":[{"kind":"ServiceAccount","name":"alice"}]}`)
	eventually(t, "alice lists configmaps once bound", func() (bool, string) {
		code, b, _ := alice.Do(t, "GET", "/api/v1/namespaces/default/configmaps", "", nil)
		return code == http.StatusOK, string(b)
	})
	code, body, _ := alice.Do(t, "POST", "/api/v1/namespaces/default/configmaps", "application/json", strings.NewReader(`{"metadata":{"name":"x"}}`))
	expectJSON(t, "create beyond the role", code, body, http.StatusForbidden, forbiddenBody(
		`configmaps is forbidden: User "`+aliceName+`" cannot create resource "configmaps" in API group "" in the namespace "default"`,
		map[string]string{"kind": "configmaps"}))

	create(t, s, rbac+"/namespaces/default/rolebindings", `{"metadata":{"name":"dangling"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"nonexistent"},"subjects":[{"kind":"ServiceAccount","name":"alice"}]}`)
	want := forbiddenBody(`configmaps is forbidden: User "`+aliceName+`" cannot create resource "configmaps" in API group "" in the namespace "default": rbac: RBAC: clusterrole.rbac.authorization.k8s.io "nonexistent" not found`,
		map[string]string{"kind": "configmaps"})
	eventually(t, "the missing role's evaluation error", func() (bool, string) {
		code, body, _ := alice.Do(t, "POST", "/api/v1/namespaces/default/configmaps", "application/json", strings.NewReader(`{"metadata":{"name":"x"}}`))
		var got map[string]any
		_ = json.Unmarshal(body, &got)
		return code == http.StatusForbidden && got["message"] == want["message"], string(body)
	})
	code, body, _ = alice.Do(t, "POST", "/api/v1/namespaces/default/configmaps", "application/json", strings.NewReader(`{"metadata":{"name":"x"}}`))
	expectJSON(t, "missing role", code, body, http.StatusForbidden, want)
	if code, b, _ := s.Do(t, "GET", "/api/v1/namespaces/default/configmaps/x", "", nil); code != http.StatusNotFound {
		t.Fatalf("refused create stored something: %d %s", code, b)
	}

	if code, b, _ := s.Do(t, "DELETE", rbac+"/namespaces/default/rolebindings/alice-cm", "", nil); code != http.StatusOK {
		t.Fatalf("delete binding: %d %s", code, b)
	}
	eventually(t, "alice refused once unbound", func() (bool, string) {
		code, b, _ := alice.Do(t, "GET", "/api/v1/namespaces/default/configmaps", "", nil)
		return code == http.StatusForbidden, string(b)
	})
	if code, b, _ := s.Do(t, "GET", "/api/v1/secrets", "", nil); code != http.StatusOK {
		t.Fatalf("admin (system:masters): %d %s", code, b)
	}
}

// TestAuthorizationModes checks AlwaysAllow, AlwaysDeny (system:masters
// still allowed first) and the refusal of unknown modes.
func TestAuthorizationModes(t *testing.T) {
	allow := testserver.Start(t, testserver.Options{AuthorizationModes: []string{apiserver.ModeAlwaysAllow}})
	if code, b, _ := allow.As(allow.ServiceAccountToken(t, "default", "bob")).Do(t, "GET", "/api/v1/secrets", "", nil); code != http.StatusOK {
		t.Errorf("AlwaysAllow: %d %s", code, b)
	}
	deny := testserver.Start(t, testserver.Options{AuthorizationModes: []string{apiserver.ModeAlwaysDeny}})
	code, body, _ := deny.As(deny.ServiceAccountToken(t, "default", "bob")).Do(t, "GET", "/api/v1/secrets", "", nil)
	expectJSON(t, "AlwaysDeny", code, body, http.StatusForbidden, forbiddenBody(
		`secrets is forbidden: User "system:serviceaccount:default:bob" cannot list resource "secrets" in API group "" at the cluster scope: alwaysdeny: Everything is forbidden.`,
		map[string]string{"kind": "secrets"}))
	for modes, want := range map[string]string{
		"RBAC,Webhook": `authorization-mode "Webhook" is not a valid mode`,
		"RBAC,RBAC":    `authorization-mode "RBAC" has mode specified more than once`,
	} {
		_, err := apiserver.New(apiserver.Config{AuthorizationModes: strings.Split(modes, ",")})
		if err == nil || err.Error() != want {
			t.Errorf("modes %s: error %v, want %s", modes, err, want)
		}
	}
}
