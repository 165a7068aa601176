package serviceaccount

import (
	"strings"
	"testing"
	"time"
)

// TestSignatureCacheKeepsChecks: a token served from the cache of checked
// signatures is still refused once expired or for another audience, a
// tampered copy is checked (and refused) on its own, and an entry is
// trusted only for signatureCacheTTL.
func TestSignatureCacheKeepsChecks(t *testing.T) {
	i := newIssuer(t, DefaultIssuer, "other")
	now := time.Unix(1_800_000_000, 0)
	raw, _, err := i.Issue(Claims{Namespace: "ns", ServiceAccount: Ref{Name: "sa", UID: "u1"}}, []string{DefaultIssuer}, now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := i.Verify(raw, now, nil); err != nil {
		t.Fatal(err)
	}
	if i.checked.get(raw, now.Add(time.Second)) == nil {
		t.Fatal("a verified token is not in the cache")
	}
	if i.checked.get(raw, now.Add(signatureCacheTTL)) != nil {
		t.Error("a cached signature is trusted past signatureCacheTTL")
	}
	// Within the TTL, from the cache: the other checks still run.
	if _, err := i.Verify(raw, now.Add(time.Second), []string{"other"}); err == nil || !strings.Contains(err.Error(), "is invalid for the target audiences") {
		t.Errorf("cached token, wrong audience: %v", err)
	}
	expiring, _, err := i.Issue(Claims{Namespace: "ns", ServiceAccount: Ref{Name: "sa", UID: "u1"}}, nil, now, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := i.Verify(expiring, now, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := i.Verify(expiring, now.Add(time.Second+Leeway+time.Second), nil); err == nil || err.Error() != "service account token has expired" {
		t.Errorf("cached token past its expiry: %v", err)
	}
	// A copy with another signature is not the cached token.
	parts := strings.Split(raw, ".")
	forged := parts[0] + "." + parts[1] + "." + strings.Repeat("A", len(parts[2]))
	if _, err := i.Verify(forged, now, nil); err == nil {
		t.Error("a forged signature of a cached token is accepted")
	}
	if i.checked.get(forged, now) != nil {
		t.Error("a refused token is cached")
	}
}

// BenchmarkVerify: a token's first check (RSA) and a cached one.
func BenchmarkVerify(b *testing.B) {
	i := newIssuer(b)
	now := time.Unix(1_800_000_000, 0)
	raw, _, err := i.Issue(Claims{Namespace: "ns", ServiceAccount: Ref{Name: "sa", UID: "u1"}}, nil, now, time.Hour)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("uncached", func(b *testing.B) {
		for b.Loop() {
			i.checked = signatureCache{}
			if _, err := i.Verify(raw, now, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cached", func(b *testing.B) {
		for b.Loop() {
			if _, err := i.Verify(raw, now, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}
