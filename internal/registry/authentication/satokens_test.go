package authentication_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"

	"github.com/setpoint-dev/setpoint/internal/pki"
	"github.com/setpoint-dev/setpoint/internal/registry/reftest"
	"github.com/setpoint-dev/setpoint/internal/serviceaccount"
	"github.com/setpoint-dev/setpoint/internal/testwait"
)

const ns = "default"

// requestToken asks serviceaccounts/token for sa's token with the body's
// extra spec fields (`"audiences":[…]`, `"boundObjectRef":{…}`).
func requestToken(t *testing.T, s *reftest.Server, sa, spec string) string {
	t.Helper()
	var tr authenticationv1.TokenRequest
	s.Must(t, http.MethodPost, "/api/v1/namespaces/"+ns+"/serviceaccounts/"+sa+"/token",
		`{"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","spec":{`+spec+`}}`, 201, &tr)
	return tr.Status.Token
}

// uidOf returns the uid of the object at path.
func uidOf(t *testing.T, s *reftest.Server, path string) string {
	t.Helper()
	var m struct {
		Metadata struct{ UID string } `json:"metadata"`
	}
	s.Must(t, http.MethodGet, path, "", 200, &m)
	return m.Metadata.UID
}

// withToken sends a request bearing token and returns its status code.
func withToken(t *testing.T, s *reftest.Server, token, path string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.Test.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := s.Test.Client.Transport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// TestServiceAccountTokens is the table of the issue's token checks: each
// token is reviewed (TokenReview, with kube-apiserver's words) and used on
// a real request (401 for every refused token). The refusals' messages were
// recorded from kube-apiserver v1.37.2.
func TestServiceAccountTokens(t *testing.T) {
	s := start(t)
	for _, sa := range []string{"alice", "gone", "again"} {
		s.Must(t, http.MethodPost, "/api/v1/namespaces/"+ns+"/serviceaccounts", `{"metadata":{"name":"`+sa+`"}}`, 201, nil)
	}
	s.Must(t, http.MethodPost, "/api/v1/namespaces/"+ns+"/pods",
		`{"metadata":{"name":"p1"},"spec":{"serviceAccountName":"alice","containers":[{"name":"c","image":"x"}]}}`, 201, nil)
	s.Must(t, http.MethodPost, "/api/v1/namespaces/"+ns+"/secrets", `{"metadata":{"name":"s1"}}`, 201, nil)
	aliceUID := uidOf(t, s, "/api/v1/namespaces/"+ns+"/serviceaccounts/alice")
	podUID := uidOf(t, s, "/api/v1/namespaces/"+ns+"/pods/p1")

	plain := requestToken(t, s, "alice", "")
	multi := requestToken(t, s, "alice", `"audiences":["foo","bar"]`)
	podBound := requestToken(t, s, "alice", `"boundObjectRef":{"apiVersion":"v1","kind":"Pod","name":"p1"}`)
	secretBound := requestToken(t, s, "alice", `"boundObjectRef":{"apiVersion":"v1","kind":"Secret","name":"s1"}`)
	goneSA := requestToken(t, s, "gone", "")
	recreated := requestToken(t, s, "again", "")
	s.Must(t, http.MethodDelete, "/api/v1/namespaces/"+ns+"/serviceaccounts/gone", "", 200, nil)
	s.Must(t, http.MethodDelete, "/api/v1/namespaces/"+ns+"/serviceaccounts/again", "", 200, nil)
	s.Must(t, http.MethodPost, "/api/v1/namespaces/"+ns+"/serviceaccounts", `{"metadata":{"name":"again"}}`, 201, nil)
	againUID := uidOf(t, s, "/api/v1/namespaces/"+ns+"/serviceaccounts/again")

	// Tokens signed with the server's own key, outside the TokenRequest
	// API: long expired, and for another issuer.
	key, err := pki.EnsureServiceAccountKey(s.Test.DataDir)
	if err != nil {
		t.Fatal(err)
	}
	own, _ := serviceaccount.NewIssuer(key, serviceaccount.DefaultIssuer, []string{serviceaccount.DefaultIssuer})
	claims := serviceaccount.Claims{Namespace: ns, ServiceAccount: serviceaccount.Ref{Name: "alice", UID: aliceUID}}
	expired, _, _ := own.Issue(claims, own.Audiences(), time.Now().Add(-3*time.Hour), time.Hour)
	otherIss, _ := serviceaccount.NewIssuer(key, "https://issuer.example", []string{serviceaccount.DefaultIssuer})
	wrongIssuer, _, _ := otherIss.Issue(claims, own.Audiences(), time.Now(), time.Hour)
	legacy := func(secret string) string {
		tok, err := own.IssueLegacy(serviceaccount.LegacyClaims{Namespace: ns, SecretName: secret, ServiceAccountName: "alice", ServiceAccountUID: aliceUID})
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	legacyOK, legacyOther, legacyMarked, legacyNoSecret := legacy("tok-ok"), legacy("tok-other"), legacy("tok-marked"), legacy("tok-none")
	for name, c := range map[string]struct{ token, labels string }{
		"tok-ok": {legacyOK, "{}"}, "tok-other": {"another token", "{}"},
		"tok-marked": {legacyMarked, `{"kubernetes.io/legacy-token-invalid-since":"2026-01-01"}`},
	} {
		s.Must(t, http.MethodPost, "/api/v1/namespaces/"+ns+"/secrets", `{"metadata":{"name":"`+name+`","labels":`+c.labels+
			`,"annotations":{"kubernetes.io/service-account.name":"alice"}},"type":"kubernetes.io/service-account-token","stringData":{"token":"`+c.token+`"}}`, 201, nil)
	}
	parts := strings.Split(plain, ".")
	forged := parts[0] + "." + parts[1] + "." + strings.Repeat("A", len(parts[2]))

	const api = `["https://kubernetes.default.svc.cluster.local"]`
	cases := []struct {
		name, token, audiences string
		wantError              string // "" means authenticated
		wantAuds               string
		wantExtra              []string
	}{
		{name: "plain", token: plain, wantAuds: api, wantExtra: []string{"authentication.kubernetes.io/credential-id"}},
		{name: "pod-bound", token: podBound, wantAuds: api, wantExtra: []string{"authentication.kubernetes.io/credential-id",
			"authentication.kubernetes.io/pod-name=p1", "authentication.kubernetes.io/pod-uid=" + podUID}},
		{name: "secret-bound", token: secretBound, wantAuds: api, wantExtra: []string{"authentication.kubernetes.io/credential-id"}},
		{name: "other audiences, asked for one of them", token: multi, audiences: `["bar","baz"]`, wantAuds: `["bar"]`,
			wantExtra: []string{"authentication.kubernetes.io/credential-id"}},
		{name: "wrong audience", token: multi,
			wantError: `[invalid bearer token, token audiences ["foo" "bar"] is invalid for the target audiences ["https://kubernetes.default.svc.cluster.local"]]`},
		{name: "asked for another audience", token: plain, audiences: `["foo"]`,
			wantError: `[invalid bearer token, token audiences ["https://kubernetes.default.svc.cluster.local"] is invalid for the target audiences ["foo"]]`},
		{name: "forged", token: forged, wantError: "[invalid bearer token, go-jose/go-jose: error in cryptographic primitive]"},
		{name: "expired", token: expired, wantError: "[invalid bearer token, service account token has expired]"},
		{name: "wrong issuer", token: wrongIssuer, wantError: "invalid bearer token"},
		{name: "deleted service account", token: goneSA, wantError: `[invalid bearer token, serviceaccounts "gone" not found]`},
		{name: "legacy", token: legacyOK, wantAuds: api},
		{name: "legacy, not the Secret's", token: legacyOther, wantError: "[invalid bearer token, Token does not match server's copy]"},
		{name: "legacy, marked invalid", token: legacyMarked, wantError: "[invalid bearer token, the token in secret default/tok-marked for service account default/alice has been marked invalid. " +
			"Use tokens from the TokenRequest API or manually created secret-based tokens, or remove the 'kubernetes.io/legacy-token-invalid-since' label from the secret to temporarily allow use of this token]"},
		{name: "legacy, no Secret", token: legacyNoSecret, wantError: "[invalid bearer token, Token has been invalidated]"},
		{name: "legacy, asked for another audience", token: legacyOK, audiences: `["foo"]`,
			wantError: `[invalid bearer token, token audiences ["https://kubernetes.default.svc.cluster.local"] is invalid for the target audiences ["foo"]]`},
		{name: "recreated service account", token: recreated,
			wantError: "[invalid bearer token, service account UID (" + againUID + ") does not match claim ("},
	}
	check := func(t *testing.T, name, token, audiences, wantError, wantAuds string, wantExtra []string) {
		t.Helper()
		spec := `"token":"` + token + `"`
		if audiences != "" {
			spec += `,"audiences":` + audiences
		}
		tr := review(t, s, `{"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview","spec":{`+spec+`}}`)
		if wantError != "" {
			if tr.Status.Authenticated || !strings.HasPrefix(tr.Status.Error, wantError) || tr.Status.User.Username != "" {
				t.Errorf("%s: review %+v, want error %q", name, tr.Status, wantError)
			}
			if code := withToken(t, s, token, "/api/v1/namespaces/"+ns+"/pods"); audiences == "" && code != 401 {
				t.Errorf("%s: request answered %d, want 401", name, code)
			}
			return
		}
		auds, _ := json.Marshal(tr.Status.Audiences)
		u := tr.Status.User
		if !tr.Status.Authenticated || tr.Status.Error != "" || string(auds) != wantAuds ||
			u.Username != "system:serviceaccount:default:alice" || u.UID != aliceUID ||
			strings.Join(u.Groups, ",") != "system:serviceaccounts,system:serviceaccounts:default,system:authenticated" ||
			len(u.Extra) != len(wantExtra) {
			t.Errorf("%s: review %+v", name, tr.Status)
		}
		for _, kv := range wantExtra {
			k, v, hasV := strings.Cut(kv, "=")
			if got := u.Extra[k]; len(got) != 1 || (hasV && got[0] != v) || (!hasV && !strings.HasPrefix(got[0], "JTI=")) {
				t.Errorf("%s: extra %s = %v", name, k, got)
			}
		}
		if audiences == "" {
			// Authenticated: allowed or refused by authorization, never 401.
			if code := withToken(t, s, token, "/api/v1/namespaces/"+ns+"/pods"); code != 200 && code != 403 {
				t.Errorf("%s: request answered %d, want 200 or 403", name, code)
			}
		}
	}
	for _, c := range cases {
		check(t, c.name, c.token, c.audiences, c.wantError, c.wantAuds, c.wantExtra)
	}

	// A token dies with the object it is bound to.
	s.Must(t, http.MethodDelete, "/api/v1/namespaces/"+ns+"/pods/p1?gracePeriodSeconds=0", "", 200, nil)
	s.Must(t, http.MethodDelete, "/api/v1/namespaces/"+ns+"/secrets/s1", "", 200, nil)
	waitGone(t, s, "/api/v1/namespaces/"+ns+"/pods/p1")
	for name, tok := range map[string]string{"deleted pod": podBound, "deleted secret": secretBound} {
		check(t, name, tok, "", "[invalid bearer token, service account token has been invalidated]", "", nil)
	}
	check(t, "plain, after the deletions", plain, "", "", api, []string{"authentication.kubernetes.io/credential-id"})
}

// waitGone waits until path answers 404.
func waitGone(t *testing.T, s *reftest.Server, path string) {
	t.Helper()
	testwait.UntilEvery(t, 10*time.Second, 50*time.Millisecond, path+" gone", func() error {
		if code, body := s.Do(t, http.MethodGet, path, ""); code != 404 {
			return fmt.Errorf("still there: %d %s", code, body)
		}
		return nil
	})
}
