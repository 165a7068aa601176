package serviceaccount

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func newIssuer(t *testing.T, audiences ...string) *Issuer {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	if len(audiences) == 0 {
		audiences = []string{DefaultIssuer}
	}
	i, err := NewIssuer(key, DefaultIssuer, audiences)
	if err != nil {
		t.Fatal(err)
	}
	return i
}

func TestIssueAndVerify(t *testing.T) {
	i := newIssuer(t)
	now := time.Unix(1_800_000_000, 0)
	c := Claims{Namespace: "ns", ServiceAccount: Ref{Name: "sa", UID: "u1"}, Pod: &Ref{Name: "p", UID: "u2"}, Node: &Ref{Name: "n", UID: "u3"}}
	raw, exp, err := i.Issue(c, i.Audiences(), now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if !exp.Equal(now.Add(time.Hour)) {
		t.Errorf("expiry %v", exp)
	}
	// The wire form kube-apiserver uses: RS256 with a kid, the standard
	// claims and kubernetes.io.
	parts := strings.Split(raw, ".")
	var header map[string]string
	hb, _ := base64.RawURLEncoding.DecodeString(parts[0])
	if err := json.Unmarshal(hb, &header); err != nil || header["alg"] != "RS256" || header["kid"] != i.kid {
		t.Fatalf("header %s", hb)
	}
	pb, _ := base64.RawURLEncoding.DecodeString(parts[1])
	var payload map[string]any
	_ = json.Unmarshal(pb, &payload)
	for _, k := range []string{"aud", "exp", "iat", "iss", "jti", "kubernetes.io", "nbf", "sub"} {
		if _, ok := payload[k]; !ok {
			t.Errorf("claim %s missing in %s", k, pb)
		}
	}
	if payload["sub"] != "system:serviceaccount:ns:sa" {
		t.Errorf("sub %v", payload["sub"])
	}
	tok, err := i.Verify(raw, now.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if tok.Claims.Pod.UID != "u2" || tok.Claims.Node.Name != "n" || tok.ID == "" {
		t.Errorf("claims %+v", tok)
	}
}

func TestVerifyRefuses(t *testing.T) {
	i := newIssuer(t)
	now := time.Unix(1_800_000_000, 0)
	c := Claims{Namespace: "ns", ServiceAccount: Ref{Name: "sa", UID: "u1"}}
	raw, _, _ := i.Issue(c, i.Audiences(), now, time.Hour)
	if _, err := i.Verify(raw, now.Add(2*time.Hour)); err == nil {
		t.Error("an expired token verified")
	}
	if _, err := i.Verify(raw, now.Add(-time.Minute)); err == nil {
		t.Error("a token before its nbf verified")
	}
	other := newIssuer(t)
	if _, err := other.Verify(raw, now); err == nil || err == ErrNotServiceAccountToken {
		t.Errorf("another key's token: %v, want a signature error", err)
	}
	foreign, _, _ := i.Issue(c, []string{"vault"}, now, time.Hour)
	if _, err := i.Verify(foreign, now); err == nil {
		t.Error("a token for another audience verified")
	}
	if _, err := i.Verify("static-token-abc", now); err != ErrNotServiceAccountToken {
		t.Errorf("a static token: %v, want ErrNotServiceAccountToken", err)
	}
	tampered := raw[:len(raw)-4] + "AAAA"
	if _, err := i.Verify(tampered, now); err == nil {
		t.Error("a tampered token verified")
	}
}
