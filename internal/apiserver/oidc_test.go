package apiserver_test

import (
	"crypto/rsa"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/setpoint-dev/setpoint/internal/pki"
	"github.com/setpoint-dev/setpoint/internal/serviceaccount"
)

// TestOIDCDiscovery checks the service-account issuer discovery documents
// against what kube-apiserver v1.37.2 serves (recorded with its own key
// and advertised address): the same fields in the same order, content
// types and Cache-Control, with or without a trailing slash; the key set
// verifies a token the server issued; anonymous requests stay refused and
// other methods get 405.
func TestOIDCDiscovery(t *testing.T) {
	s, _ := start(t, nil)
	key, err := pki.EnsureServiceAccountKey(s.DataDir)
	if err != nil {
		t.Fatal(err)
	}
	kid, _ := serviceaccount.KeyID(&key.PublicKey)
	for _, p := range []string{"/.well-known/openid-configuration", "/.well-known/openid-configuration/"} {
		code, body, h := s.Do(t, http.MethodGet, p, "", nil)
		want := `{"issuer":"https://kubernetes.default.svc.cluster.local","jwks_uri":"` + s.URL + `/openid/v1/jwks",` +
			`"response_types_supported":["id_token"],"subject_types_supported":["public"],"id_token_signing_alg_values_supported":["RS256"]}`
		if code != 200 || string(body) != want || h.Get("Content-Type") != "application/json" || h.Get("Cache-Control") != "public, max-age=3600" {
			t.Errorf("%s: %d %v\n%s\nwant\n%s", p, code, h, body, want)
		}
	}
	for _, p := range []string{"/openid/v1/jwks", "/openid/v1/jwks/"} {
		code, body, h := s.Do(t, http.MethodGet, p, "", nil)
		if code != 200 || h.Get("Content-Type") != "application/jwk-set+json" || h.Get("Cache-Control") != "public, max-age=3600" {
			t.Fatalf("%s: %d %v %s", p, code, h, body)
		}
		prefix := `{"keys":[{"use":"sig","kty":"RSA","kid":"` + kid + `","alg":"RS256","n":"`
		if !strings.HasPrefix(string(body), prefix) || !strings.HasSuffix(string(body), `","e":"AQAB"}]}`) {
			t.Errorf("%s: %s, want kube-apiserver's field order %s…", p, body, prefix)
		}
		var set jose.JSONWebKeySet
		if err := json.Unmarshal(body, &set); err != nil || len(set.Keys) != 1 {
			t.Fatalf("%s: %v %s", p, err, body)
		}
		// The published key verifies the server's tokens.
		iss, _ := serviceaccount.NewIssuer(key, serviceaccount.DefaultIssuer, nil)
		raw, _ := iss.IssueLegacy(serviceaccount.LegacyClaims{Namespace: "ns", SecretName: "s", ServiceAccountName: "sa", ServiceAccountUID: "u"})
		tok, err := jwt.ParseSigned(raw, []jose.SignatureAlgorithm{jose.RS256})
		var claims jwt.Claims
		if err != nil || tok.Claims(set.Keys[0].Key.(*rsa.PublicKey), &claims) != nil || claims.Issuer != serviceaccount.LegacyIssuer {
			t.Errorf("the published key does not verify a token: %v", err)
		}
	}
	code, body, _ := s.Do(t, http.MethodPost, "/openid/v1/jwks", "application/json", strings.NewReader("{}"))
	if code != 405 || !strings.Contains(string(body), `"reason":"MethodNotAllowed"`) {
		t.Errorf("POST: %d %s", code, body)
	}
	req, _ := http.NewRequest(http.MethodGet, s.URL+"/openid/v1/jwks", nil)
	resp, err := s.Client.Transport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Errorf("anonymous: %d, want 401", resp.StatusCode)
	}
}
