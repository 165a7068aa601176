package authz

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/setpoint-dev/setpoint/compat/internal/difftest"
)

// requestCase is one real request; writes are dry runs, so every identity
// sends the same ones on unchanged clusters.
type requestCase struct {
	name, method, path, body, contentType string
}

var requestCases = []requestCase{
	{name: "list pods in a", method: "GET", path: "/api/v1/namespaces/authz-a/pods"},
	{name: "list pods everywhere", method: "GET", path: "/api/v1/pods"},
	{name: "get a configmap in a", method: "GET", path: "/api/v1/namespaces/authz-a/configmaps/shared"},
	{name: "get the secret in b", method: "GET", path: "/api/v1/namespaces/authz-b/secrets/creds"},
	{name: "list secrets in b", method: "GET", path: "/api/v1/namespaces/authz-b/secrets"},
	{name: "create a configmap in a", method: "POST", path: "/api/v1/namespaces/authz-a/configmaps?dryRun=All",
		body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"new"}}`},
	{name: "patch a configmap in b", method: "PATCH", path: "/api/v1/namespaces/authz-b/configmaps/shared?dryRun=All",
		body: `{"data":{"k":"w"}}`, contentType: "application/merge-patch+json"},
	{name: "delete a configmap in a", method: "DELETE", path: "/api/v1/namespaces/authz-a/configmaps/shared?dryRun=All"},
	{name: "list nodes", method: "GET", path: "/api/v1/nodes"},
	{name: "get node n1", method: "GET", path: "/api/v1/nodes/n1"},
	{name: "list deployments in b", method: "GET", path: "/apis/apps/v1/namespaces/authz-b/deployments"},
	{name: "list namespaces", method: "GET", path: "/api/v1/namespaces"},
	{name: "list clusterroles", method: "GET", path: "/apis/rbac.authorization.k8s.io/v1/clusterroles"},
	{name: "list crds", method: "GET", path: "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"},
	{name: "bind view in a", method: "POST", path: "/apis/rbac.authorization.k8s.io/v1/namespaces/authz-a/rolebindings?dryRun=All",
		body: `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{"name":"x"},
		"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"view"},
		"subjects":[{"apiGroup":"rbac.authorization.k8s.io","kind":"User","name":"eve"}]}`},
	{name: "escalate: bind cluster-admin in a", method: "POST", path: "/apis/rbac.authorization.k8s.io/v1/namespaces/authz-a/rolebindings?dryRun=All",
		body: `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{"name":"x"},
		"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"cluster-admin"},
		"subjects":[{"apiGroup":"rbac.authorization.k8s.io","kind":"User","name":"eve"}]}`},
	{name: "escalate: a role on nodes in a", method: "POST", path: "/apis/rbac.authorization.k8s.io/v1/namespaces/authz-a/roles?dryRun=All",
		body: `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role","metadata":{"name":"x"},
		"rules":[{"apiGroups":[""],"resources":["nodes","configmaps"],"verbs":["get","list"]}]}`},
	{name: "a role within what one holds in a", method: "POST", path: "/apis/rbac.authorization.k8s.io/v1/namespaces/authz-a/roles?dryRun=All",
		body: `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role","metadata":{"name":"x"},
		"rules":[{"apiGroups":[""],"resources":["configmaps"],"verbs":["get","list"]}]}`},
	{name: "escalate: a cluster role binding", method: "POST", path: "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings?dryRun=All",
		body: `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRoleBinding","metadata":{"name":"x"},
		"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"cluster-admin"},
		"subjects":[{"apiGroup":"rbac.authorization.k8s.io","kind":"User","name":"eve"}]}`},
	{name: "a token for nobody", method: "POST", path: "/api/v1/namespaces/authz-a/serviceaccounts/nobody/token?dryRun=All",
		body: `{"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","spec":{}}`},
	{name: "get /api", method: "GET", path: "/api"},
	{name: "get /version", method: "GET", path: "/version"},
	{name: "get /metrics", method: "GET", path: "/metrics"},
	{name: "get /openapi/v3", method: "GET", path: "/openapi/v3"},
	{name: "get /.well-known/openid-configuration", method: "GET", path: "/.well-known/openid-configuration"},
}

// TestRequests sends every identity's real requests to both sides: the
// codes must agree, and a refusal's Status must be the same.
func TestRequests(t *testing.T) {
	ctx := context.Background()
	for _, id := range env.identities {
		t.Run(id.name, func(t *testing.T) {
			var diffs []string
			refused := 0
			for _, c := range requestCases {
				req := difftest.Request{Method: c.method, Path: c.path, Header: map[string]string{}}
				for k, v := range id.header {
					req.Header[k] = v
				}
				if c.body != "" {
					req.Body = []byte(c.body)
				}
				if c.contentType != "" {
					req.Header["Content-Type"] = c.contentType
				}
				ref, err := id.ref.Do(ctx, req)
				if err != nil {
					t.Fatal(err)
				}
				sp, err := id.sp.Do(ctx, req)
				if err != nil {
					t.Fatal(err)
				}
				if ref.Code == 403 {
					refused++
				}
				if d := compareRefusal(ref, sp); d != "" {
					diffs = append(diffs, c.name+": "+d)
				}
			}
			t.Logf("%s: %d requests, %d refused by the reference, %d differences", id.name, len(requestCases), refused, len(diffs))
			if len(diffs) > 0 {
				t.Errorf("%d of %d requests differ:\n  %s", len(diffs), len(requestCases), strings.Join(firstOf(diffs, 40), "\n  "))
			}
		})
	}
}

// compareRefusal compares two answers as authorization sees them: both
// refused (401/403, with the same Status) or both let through (whatever
// the handler then answered). "" when they agree.
func compareRefusal(ref, sp *difftest.Response) string {
	refused := func(code int) bool { return code == 401 || code == 403 }
	switch {
	case refused(ref.Code) != refused(sp.Code):
		return fmt.Sprintf("reference %d %s, setpoint %d %s", ref.Code, oneLine(ref.Body), sp.Code, oneLine(sp.Body))
	case !refused(ref.Code):
		return ""
	case ref.Code != sp.Code:
		return fmt.Sprintf("reference %d, setpoint %d", ref.Code, sp.Code)
	}
	var a, b any
	if json.Unmarshal(ref.Body, &a) != nil || json.Unmarshal(sp.Body, &b) != nil {
		if string(ref.Body) != string(sp.Body) {
			return fmt.Sprintf("reference %s, setpoint %s", oneLine(ref.Body), oneLine(sp.Body))
		}
		return ""
	}
	if !reflect.DeepEqual(a, b) {
		return fmt.Sprintf("Status: reference %s, setpoint %s", oneLine(ref.Body), oneLine(sp.Body))
	}
	return ""
}

func oneLine(b []byte) string {
	s := strings.Join(strings.Fields(string(b)), " ")
	if len(s) > 400 {
		s = s[:400] + "…"
	}
	return s
}

// firstOf keeps the first n lines, saying how many were left out.
func firstOf(lines []string, n int) []string {
	if len(lines) <= n {
		return lines
	}
	return append(lines[:n:n], fmt.Sprintf("… and %d more", len(lines)-n))
}
