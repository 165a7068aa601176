package core_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"

	"github.com/setpoint-dev/setpoint/internal/testserver"
)

// asToken sends a request with another bearer token.
func asToken(t *testing.T, s *testserver.Server, token, method, path, body string) (int, []byte) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, s.URL+path, r)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// TestServiceAccountTokens checks serviceaccounts/token (`kubectl create
// token`) as kube-apiserver answers it, and that the tokens authenticate as
// the service account until it is deleted.
func TestServiceAccountTokens(t *testing.T) {
	// Authentication is under test: the token's user may do everything.
	s := testserver.Start(t, testserver.Options{AuthorizationModes: []string{"AlwaysAllow"}})
	const sas = "/api/v1/namespaces/default/serviceaccounts"
	if code, body, _ := s.Do(t, "POST", sas, "application/json", strings.NewReader(`{"metadata":{"name":"robot"}}`)); code != 201 {
		t.Fatalf("create service account: %d %s", code, body)
	}
	request := func(name, spec string) (int, authenticationv1.TokenRequest, string) {
		code, body, _ := s.Do(t, "POST", sas+"/"+name+"/token", "application/json",
			strings.NewReader(`{"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","spec":`+spec+`}`))
		var tr authenticationv1.TokenRequest
		_ = json.Unmarshal(body, &tr)
		return code, tr, string(body)
	}
	code, tr, body := request("robot", `{}`)
	if code != 201 || tr.Status.Token == "" || *tr.Spec.ExpirationSeconds != 3600 ||
		len(tr.Spec.Audiences) != 1 || tr.Spec.Audiences[0] != "https://kubernetes.default.svc.cluster.local" || tr.Name != "robot" {
		t.Fatalf("token request: %d %s", code, body)
	}
	if got := tr.Status.ExpirationTimestamp.Sub(tr.CreationTimestamp.Time).Seconds(); got < 3599 || got > 3601 {
		t.Errorf("token lifetime %v s, want 3600", got)
	}

	// The token authenticates as the service account.
	code, who := asToken(t, s, tr.Status.Token, "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews",
		`{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}`)
	if code != 201 || !strings.Contains(string(who), `"username":"system:serviceaccount:default:robot"`) ||
		!strings.Contains(string(who), `"system:serviceaccounts:default"`) || !strings.Contains(string(who), `"authentication.kubernetes.io/credential-id":["JTI=`) {
		t.Fatalf("whoami with the token: %d %s", code, who)
	}
	code, review, _ := s.Do(t, "POST", "/apis/authentication.k8s.io/v1/tokenreviews", "application/json",
		strings.NewReader(`{"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview","spec":{"token":"`+tr.Status.Token+`"}}`))
	if code != 201 || !strings.Contains(string(review), `"authenticated":true`) || !strings.Contains(string(review), "system:serviceaccount:default:robot") {
		t.Fatalf("token review: %d %s", code, review)
	}

	// A token bound to a secret dies with the secret; every token of the
	// service account dies with it.
	if code, body, _ := s.Do(t, "POST", "/api/v1/namespaces/default/secrets", "application/json", strings.NewReader(`{"metadata":{"name":"key"}}`)); code != 201 {
		t.Fatalf("create secret: %d %s", code, body)
	}
	_, bound, body := request("robot", `{"boundObjectRef":{"kind":"Secret","apiVersion":"v1","name":"key"}}`)
	if bound.Status.Token == "" {
		t.Fatalf("bound token: %s", body)
	}
	if code, _ := asToken(t, s, bound.Status.Token, "GET", "/api/v1/namespaces", ""); code != 200 {
		t.Fatalf("bound token before the secret is deleted: %d", code)
	}
	// (The server reads the objects from its watch cache, as kube-apiserver
	// reads them from an informer: a deletion takes effect within moments.)
	refused := func(token string) bool {
		for range 50 {
			if code, _ := asToken(t, s, token, "GET", "/api/v1/namespaces", ""); code == 401 {
				return true
			}
			time.Sleep(20 * time.Millisecond)
		}
		return false
	}
	s.Do(t, "DELETE", "/api/v1/namespaces/default/secrets/key", "", nil)
	if !refused(bound.Status.Token) {
		t.Error("a token bound to a deleted secret still authenticates")
	}
	s.Do(t, "DELETE", sas+"/robot", "", nil)
	if !refused(tr.Status.Token) {
		t.Error("a token of a deleted service account still authenticates")
	}
}
