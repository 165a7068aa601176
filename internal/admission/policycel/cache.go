package policycel

import (
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Cache holds what the policy plugins compile from each policy, by the
// policy's UID: a policy is compiled again when its generation changes (a
// compiled policy keeps the spec of its generation, never changed once
// shared). Safe for concurrent use.
type Cache[C any] struct {
	mu sync.Mutex
	m  map[types.UID]cached[C]
}

type cached[C any] struct {
	generation int64
	compiled   C
}

// Get returns policy's compiled form, compiling it (compile) when it is
// new, of another generation, or has none (generation 0: compiled every
// time).
func (c *Cache[C]) Get(policy metav1.Object, compile func() C) C {
	c.mu.Lock()
	defer c.mu.Unlock()
	uid, gen := policy.GetUID(), policy.GetGeneration()
	if e, ok := c.m[uid]; ok && e.generation == gen && gen != 0 {
		return e.compiled
	}
	out := compile()
	if c.m == nil {
		c.m = map[types.UID]cached[C]{}
	}
	c.m[uid] = cached[C]{generation: gen, compiled: out}
	return out
}

// Prune forgets the policies not in live (the stored ones).
func (c *Cache[C]) Prune(live map[types.UID]bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for uid := range c.m {
		if !live[uid] {
			delete(c.m, uid)
		}
	}
}
