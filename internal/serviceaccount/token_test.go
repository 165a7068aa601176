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

func newIssuer(t testing.TB, audiences ...string) *Issuer {
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
	if aud, ok := payload["aud"].([]any); !ok || len(aud) != 1 || aud[0] != DefaultIssuer {
		t.Errorf("aud %#v, want kube-apiserver's array of one audience", payload["aud"])
	}
	if payload["sub"] != "system:serviceaccount:ns:sa" {
		t.Errorf("sub %v", payload["sub"])
	}
	tok, err := i.Verify(raw, now.Add(time.Minute), nil)
	if err != nil {
		t.Fatal(err)
	}
	if tok.Claims.Pod.UID != "u2" || tok.Claims.Node.Name != "n" || tok.ID == "" {
		t.Errorf("claims %+v", tok)
	}
}

// TestVerifyRefuses pins kube-apiserver's order of checks and its
// messages (TokenReview reports them).
func TestVerifyRefuses(t *testing.T) {
	i := newIssuer(t)
	now := time.Unix(1_800_000_000, 0)
	c := Claims{Namespace: "ns", ServiceAccount: Ref{Name: "sa", UID: "u1"}}
	raw, _, _ := i.Issue(c, i.Audiences(), now, time.Hour)
	other := newIssuer(t)
	forged, _, _ := other.Issue(c, i.Audiences(), now, time.Hour)
	foreign, _, _ := i.Issue(c, []string{"vault", "db"}, now, time.Hour)
	parts := strings.Split(raw, ".")
	otherParts := strings.Split(forged, ".")
	for _, tc := range []struct {
		name, raw string
		at        time.Time
		auds      []string
		want      string
	}{
		{"expired beyond the leeway", raw, now.Add(time.Hour + 61*time.Second), nil, "service account token has expired"},
		{"before nbf beyond the leeway", raw, now.Add(-2 * time.Minute), nil, "service account token is not valid yet"},
		{"another key's kid", forged, now, nil, "invalid signature, no keys found"},
		{"another key's signature under our kid", parts[0] + "." + otherParts[1] + "." + otherParts[2], now, nil, "go-jose/go-jose: error in cryptographic primitive"},
		{"tampered", raw[:len(raw)-4] + "AAAA", now, nil, "go-jose/go-jose: error in cryptographic primitive"},
		{"another audience", foreign, now, nil, `token audiences ["vault" "db"] is invalid for the target audiences ["https://kubernetes.default.svc.cluster.local"]`},
		{"asked for another audience", raw, now, []string{"foo"}, `token audiences ["https://kubernetes.default.svc.cluster.local"] is invalid for the target audiences ["foo"]`},
	} {
		_, err := i.Verify(tc.raw, tc.at, tc.auds)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	if _, err := i.Verify(raw, now.Add(time.Hour+59*time.Second), nil); err != nil {
		t.Errorf("expired within the leeway: %v", err)
	}
	tok, err := i.Verify(foreign, now, []string{"db", "x"})
	if err != nil || len(tok.Audiences) != 1 || tok.Audiences[0] != "db" {
		t.Errorf("asked for one of its audiences: %+v, %v", tok, err)
	}
	otherIssuer, _ := NewIssuer(i.key, "https://elsewhere", i.Audiences())
	elsewhere, _, _ := otherIssuer.Issue(c, i.Audiences(), now, time.Hour)
	for _, raw := range []string{"static-token-abc", "a.b.c", elsewhere, `{"iss":"x"}.a.b`} {
		if _, err := i.Verify(raw, now, nil); err != ErrNotServiceAccountToken {
			t.Errorf("%.20s: %v, want ErrNotServiceAccountToken", raw, err)
		}
	}
}

// TestLegacyToken pins the legacy token's wire form and its checks.
func TestLegacyToken(t *testing.T) {
	i := newIssuer(t)
	lc := LegacyClaims{Namespace: "ns", SecretName: "sa-token", ServiceAccountName: "sa", ServiceAccountUID: "u1"}
	raw, err := i.IssueLegacy(lc)
	if err != nil {
		t.Fatal(err)
	}
	pb, _ := base64.RawURLEncoding.DecodeString(strings.Split(raw, ".")[1])
	want := `{"iss":"kubernetes/serviceaccount","kubernetes.io/serviceaccount/namespace":"ns","kubernetes.io/serviceaccount/secret.name":"sa-token",` +
		`"kubernetes.io/serviceaccount/service-account.name":"sa","kubernetes.io/serviceaccount/service-account.uid":"u1","sub":"system:serviceaccount:ns:sa"}`
	if string(pb) != want {
		t.Errorf("payload\n%s\nwant\n%s", pb, want)
	}
	tok, err := i.Verify(raw, time.Now().Add(100*365*24*time.Hour), nil)
	if err != nil || tok.Legacy == nil || *tok.Legacy != lc || tok.Audiences[0] != DefaultIssuer || tok.Claims.ServiceAccount.UID != "u1" {
		t.Fatalf("verify: %+v, %v", tok, err)
	}
	if _, err := i.Verify(raw, time.Now(), []string{"foo"}); err == nil {
		t.Error("a legacy token verified for another audience")
	}
	bad, _ := i.IssueLegacy(LegacyClaims{Namespace: "ns", SecretName: "s", ServiceAccountName: "sa"})
	if _, err := i.Verify(bad, time.Now(), nil); err == nil || err.Error() != "serviceAccountUID claim is missing" {
		t.Errorf("missing uid: %v", err)
	}
}

func TestSplitUserName(t *testing.T) {
	for in, want := range map[string][2]string{
		"system:serviceaccount:ns:sa": {"ns", "sa"}, "system:serviceaccount:ns:a:b": {}, "system:serviceaccount::sa": {},
		"system:serviceaccount:NS:sa": {}, "bob": {}, "system:serviceaccounts:ns": {},
	} {
		ns, name, ok := SplitUserName(in)
		if ok != (want[0] != "") || ns != want[0] || name != want[1] {
			t.Errorf("%q: %q %q %v", in, ns, name, ok)
		}
	}
}
