package apiserver_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/apiserver"
	"github.com/setpoint-dev/setpoint/internal/authorizer"
)

// TestEnvAuthenticateToken checks the token hook of registry.Env: the
// server's own tokens authenticate as their users, others not at all.
func TestEnvAuthenticateToken(t *testing.T) {
	s, _ := start(t, nil)
	env := apiserver.EnvOf(s.API)
	u, ok := env.AuthenticateToken(context.Background(), s.Token)
	if !ok || u.Name != "setpoint-admin" || u.UID != "setpoint-admin" || strings.Join(u.Groups, ",") != "system:masters,system:authenticated" {
		t.Errorf("admin token: %+v, %v", u, ok)
	}
	for _, tok := range []string{"", "nope", s.Token + "x", "Bearer " + s.Token} {
		if u, ok := env.AuthenticateToken(context.Background(), tok); ok {
			t.Errorf("token %q authenticated as %+v", tok, u)
		}
	}
	// The default authorizer (system:masters, then RBAC) allows the admin
	// and has no opinion on a user without bindings.
	for user, want := range map[string]authorizer.Decision{"setpoint-admin": authorizer.DecisionAllow, "nobody": authorizer.DecisionNoOpinion} {
		a := authorizer.Attributes{User: authorizer.User{Name: user}, Verb: "get", ResourceRequest: true, Resource: "pods", Namespace: "default"}
		if user == "setpoint-admin" {
			a.User.Groups = []string{"system:masters"}
		}
		if d, _, err := env.Authorizer().Authorize(context.Background(), a); d != want || err != nil {
			t.Errorf("default authorizer on %s: %v %v, want %v", user, d, err, want)
		}
	}
}

// TestVirtualCreate checks what the server does for every virtual create
// as kube-apiserver does: the request's namespace (cleared on a
// cluster-scoped resource, filled in, or a 400 when different), the
// manager recorded, the answer's kind set.
func TestVirtualCreate(t *testing.T) {
	s, _ := start(t, nil)
	post := func(path, body string) (int, []byte) {
		code, out, _ := s.Do(t, http.MethodPost, path+"?fieldManager=tester", "application/json", strings.NewReader(body))
		return code, out
	}
	code, out := post("/apis/authorization.k8s.io/v1/subjectaccessreviews",
		`{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","metadata":{"namespace":"ns"},"spec":{"user":"u","resourceAttributes":{"verb":"get"}}}`)
	var sar authorizationv1.SubjectAccessReview
	// "u" has no bindings: not allowed, not denied (RBAC has no opinion).
	if err := json.Unmarshal(out, &sar); code != 201 || err != nil || sar.Namespace != "" || sar.Status.Allowed || sar.Status.Denied ||
		len(sar.ManagedFields) != 1 || sar.ManagedFields[0].Manager != "tester" || sar.ManagedFields[0].Operation != metav1.ManagedFieldsOperationUpdate {
		t.Errorf("cluster-scoped review with a namespace: %d %s", code, out)
	}
	code, out = post("/apis/authorization.k8s.io/v1/namespaces/default/localsubjectaccessreviews",
		`{"apiVersion":"authorization.k8s.io/v1","kind":"LocalSubjectAccessReview","spec":{"user":"u","resourceAttributes":{"verb":"get","namespace":"default"}}}`)
	var lsar authorizationv1.LocalSubjectAccessReview
	if err := json.Unmarshal(out, &lsar); code != 201 || err != nil || lsar.Namespace != "default" {
		t.Errorf("namespaced review without a namespace: %d %s", code, out)
	}
	code, out = post("/apis/authentication.k8s.io/v1/selfsubjectreviews", `{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}`)
	if code != 201 || !strings.Contains(string(out), `"kind":"SelfSubjectReview","apiVersion":"authentication.k8s.io/v1"`) {
		t.Errorf("new answer object: %d %s", code, out)
	}
	code, out = post("/apis/authorization.k8s.io/v1/subjectaccessreviews?fieldManager="+strings.Repeat("x", 200),
		`{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","spec":{"user":"u","resourceAttributes":{"verb":"get"}}}`)
	if code != 422 || !strings.Contains(string(out), "fieldManager") {
		t.Errorf("bad field manager: %d %s", code, out)
	}
}

// TestFieldSelectorRefusals checks both answers kube-apiserver gives to an
// unknown field label: kinds without a conversion function of their own
// list the two they accept (and accept metadata.namespace even when
// cluster-scoped), the others name the label.
func TestFieldSelectorRefusals(t *testing.T) {
	s, _ := start(t, nil)
	for path, want := range map[string]string{
		cmPath + "?fieldSelector=data.x%3Dy":                                          `"data.x" is not a known field selector: only "metadata.name", "metadata.namespace"`,
		"/apis/apps/v1/deployments?fieldSelector=spec.replicas%3D1":                   `"spec.replicas" is not a known field selector: only "metadata.name", "metadata.namespace"`,
		"/api/v1/pods?fieldSelector=spec.foo%3Dx":                                     "field label not supported: spec.foo",
		"/apis/certificates.k8s.io/v1/certificatesigningrequests?fieldSelector=x%3Dy": "field label not supported: x",
	} {
		code, out, _ := s.Do(t, http.MethodGet, path, "", nil)
		var st metav1.Status
		if err := json.Unmarshal(out, &st); code != 400 || err != nil || st.Message != want {
			t.Errorf("%s: %d %s, want %q", path, code, out, want)
		}
	}
	code, out, _ := s.Do(t, http.MethodGet, "/apis/rbac.authorization.k8s.io/v1/clusterroles?fieldSelector=metadata.namespace%3D", "", nil)
	if code != 200 {
		t.Errorf("metadata.namespace on a cluster-scoped kind: %d %s", code, out)
	}
}
