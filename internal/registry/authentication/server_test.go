package authentication_test

import (
	"crypto/tls"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"

	"github.com/setpoint-dev/setpoint/internal/registry/authentication"
	"github.com/setpoint-dev/setpoint/internal/registry/reftest"
	"github.com/setpoint-dev/setpoint/internal/testserver"
)

const (
	tokenReviews = "/apis/authentication.k8s.io/v1/tokenreviews"
	selfReviews  = "/apis/authentication.k8s.io/v1/selfsubjectreviews"
	bobToken     = "bob-token-0123456789"
)

// start runs a server whose token file also knows bob.
func start(t *testing.T) *reftest.Server {
	t.Helper()
	dir := t.TempDir()
	tokens := `admin-token-0123456789,setpoint-admin,setpoint-admin,"system:masters,system:authenticated"` + "\n" +
		bobToken + `,bob,uid-bob,"devs,system:authenticated"` + "\n"
	if err := os.WriteFile(filepath.Join(dir, "tokens.csv"), []byte(tokens), 0o600); err != nil {
		t.Fatal(err)
	}
	// Authentication is under test: every user may do everything.
	return reftest.Start(t, testserver.Options{DataDir: dir, AuthorizationModes: []string{"AlwaysAllow"}})
}

func review(t *testing.T, s *reftest.Server, body string) authenticationv1.TokenReview {
	t.Helper()
	var tr authenticationv1.TokenReview
	s.Must(t, http.MethodPost, tokenReviews, body, 201, &tr)
	return tr
}

// TestTokenReview authenticates tokens as kube-apiserver does with a token
// file: the user of a known token for the API audience, "invalid bearer
// token" otherwise, and what the client put in status kept but for what
// the review sets.
func TestTokenReview(t *testing.T) {
	s := start(t)
	tr := review(t, s, `{"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview","spec":{"token":"`+bobToken+`"}}`)
	want := authenticationv1.TokenReviewStatus{
		Authenticated: true,
		User:          authenticationv1.UserInfo{Username: "bob", UID: "uid-bob", Groups: []string{"devs", "system:authenticated"}},
		Audiences:     []string{authentication.APIAudience},
	}
	if !statusEqual(tr.Status, want) || tr.Kind != "TokenReview" || len(tr.ManagedFields) != 1 {
		t.Errorf("bob's token: %+v (kind %q, managedFields %d)", tr.Status, tr.Kind, len(tr.ManagedFields))
	}
	tr = review(t, s, `{"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview","spec":{"token":"`+bobToken+`","audiences":["`+authentication.APIAudience+`","other"]}}`)
	if !statusEqual(tr.Status, want) {
		t.Errorf("bob's token for the API audience and another: %+v", tr.Status)
	}
	for name, body := range map[string]string{
		"unknown token":  `{"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview","spec":{"token":"nope"},"status":{"authenticated":true,"user":{"username":"evil"},"audiences":["zz"]}}`,
		"other audience": `{"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview","spec":{"token":"` + bobToken + `","audiences":["foo"]},"status":{"authenticated":true,"user":{"username":"evil"},"audiences":["zz"]}}`,
	} {
		tr = review(t, s, body)
		want := authenticationv1.TokenReviewStatus{
			User: authenticationv1.UserInfo{Username: "evil"}, Audiences: []string{"zz"}, Error: "invalid bearer token",
		}
		if !statusEqual(tr.Status, want) {
			t.Errorf("%s: %+v", name, tr.Status)
		}
	}
}

func statusEqual(a, b authenticationv1.TokenReviewStatus) bool {
	return a.Authenticated == b.Authenticated && a.Error == b.Error && slices.Equal(a.Audiences, b.Audiences) &&
		a.User.Username == b.User.Username && a.User.UID == b.User.UID && slices.Equal(a.User.Groups, b.User.Groups) && len(a.User.Extra) == 0
}

// TestSelfSubjectReview answers the requesting user, by token or client
// certificate, in a new object whatever the body says.
func TestSelfSubjectReview(t *testing.T) {
	s := start(t)
	body := `{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview","metadata":{"name":"-x"},"status":{"userInfo":{"username":"evil"}}}`
	before := time.Now().Add(-time.Second)
	for _, c := range []struct {
		name   string
		do     func() (int, []byte)
		user   string
		groups []string
	}{
		{"admin token", func() (int, []byte) { return s.Do(t, http.MethodPost, selfReviews, body) }, "setpoint-admin",
			[]string{"system:masters", "system:authenticated"}},
		{"bob token", func() (int, []byte) { return post(t, s, bobToken, nil, body) }, "bob", []string{"devs", "system:authenticated"}},
		{"client certificate", func() (int, []byte) {
			cert, err := s.Test.API.CA().EnsureClient(t.TempDir(), "carol", "carol", []string{"qa"})
			if err != nil {
				t.Fatal(err)
			}
			return post(t, s, "", &cert, body)
		}, "carol", []string{"qa", "system:authenticated"}},
	} {
		code, out := c.do()
		var r authenticationv1.SelfSubjectReview
		if err := json.Unmarshal(out, &r); code != 201 || err != nil {
			t.Fatalf("%s: %d %s", c.name, code, out)
		}
		u := r.Status.UserInfo
		if r.Kind != "SelfSubjectReview" || r.Name != "" || u.Username != c.user || !slices.Equal(u.Groups, c.groups) ||
			r.CreationTimestamp.Time.Before(before) || len(r.ManagedFields) != 0 {
			t.Errorf("%s: %s", c.name, out)
		}
	}
}

// post sends a self review with a token or a client certificate.
func post(t *testing.T, s *reftest.Server, token string, cert *tls.Certificate, body string) (int, []byte) {
	t.Helper()
	tr := s.Test.Client.Transport.(*http.Transport).Clone()
	if cert != nil {
		tr.TLSClientConfig.Certificates = []tls.Certificate{*cert}
	}
	defer tr.CloseIdleConnections()
	req, err := http.NewRequest(http.MethodPost, s.Test.URL+selfReviews, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}
