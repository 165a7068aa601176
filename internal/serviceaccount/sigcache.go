package serviceaccount

import (
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4/jwt"
)

// signatureCacheTTL is how long a checked signature is trusted without
// checking it again: kube-apiserver's token authentication caches a
// success for 10 s (--token-auth cache). Here only the signature and
// the parsed claims are cached; the expiry, audiences and the objects a
// token is bound to are checked on every request, so a token stops working
// the moment its pod or ServiceAccount is deleted.
const signatureCacheTTL = 10 * time.Second

// signatureCacheSize bounds the cache: past it, expired entries are
// dropped, and if none are, the whole cache.
const signatureCacheSize = 10000

// verified are the claims of a token whose signature was checked.
type verified struct {
	legacyIssuer bool
	std          jwt.Claims
	aud          audienceClaim
	priv         privateClaims
	legacy       LegacyClaims
}

// signatureCache maps a raw token to its verified claims and when they
// were checked. The zero value is ready to use; safe for concurrent use.
type signatureCache struct {
	mu      sync.RWMutex
	entries map[string]cachedSignature
}

type cachedSignature struct {
	v  *verified
	at time.Time
}

// get returns the claims of raw if its signature was checked within
// signatureCacheTTL before now, else nil.
func (c *signatureCache) get(raw string, now time.Time) *verified {
	c.mu.RLock()
	e, ok := c.entries[raw]
	c.mu.RUnlock()
	if !ok || now.Sub(e.at) >= signatureCacheTTL || now.Before(e.at) {
		return nil
	}
	return e.v
}

// put records that raw's signature was checked at now.
func (c *signatureCache) put(raw string, v *verified, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = make(map[string]cachedSignature)
	}
	if len(c.entries) >= signatureCacheSize {
		for k, e := range c.entries {
			if now.Sub(e.at) >= signatureCacheTTL || now.Before(e.at) {
				delete(c.entries, k)
			}
		}
		if len(c.entries) >= signatureCacheSize {
			clear(c.entries)
		}
	}
	c.entries[raw] = cachedSignature{v: v, at: now}
}
