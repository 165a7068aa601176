package reflector

import (
	"context"
	"math/rand/v2"
	"time"

	"k8s.io/utils/clock"
)

// Backoff paces the reflector's retries: after the n-th consecutive failure
// it waits base(n) plus a random jitter in [0, Jitter*base(n)), where
// base(1) = Initial and base(n+1) = min(base(n)*Factor, Max). Max caps the
// base, so a wait is at most Max*(1+Jitter). Once the reflector has run for
// ResetAfter without needing a wait, the next failure starts again from
// Initial. Zero fields take the defaults (client-go's): Initial 800ms,
// Max 30s, Factor 2, Jitter 1.0, ResetAfter 2 minutes; a negative Jitter
// disables jitter.
type Backoff struct {
	Initial    time.Duration
	Max        time.Duration
	Factor     float64
	Jitter     float64
	ResetAfter time.Duration
}

// Default backoff parameters.
const (
	DefaultBackoffInitial    = 800 * time.Millisecond
	DefaultBackoffMax        = 30 * time.Second
	DefaultBackoffFactor     = 2.0
	DefaultBackoffJitter     = 1.0
	DefaultBackoffResetAfter = 2 * time.Minute
)

func (b Backoff) withDefaults() Backoff {
	if b.Initial <= 0 {
		b.Initial = DefaultBackoffInitial
	}
	if b.Max <= 0 {
		b.Max = DefaultBackoffMax
	}
	if b.Max < b.Initial {
		b.Max = b.Initial
	}
	if b.Factor < 1 {
		b.Factor = DefaultBackoffFactor
	}
	switch {
	case b.Jitter == 0:
		b.Jitter = DefaultBackoffJitter
	case b.Jitter < 0:
		b.Jitter = 0
	}
	if b.ResetAfter <= 0 {
		b.ResetAfter = DefaultBackoffResetAfter
	}
	return b
}

// backoffState is the running state of a Backoff. It is used by one
// goroutine only.
type backoffState struct {
	cfg   Backoff
	clock clock.Clock
	rnd   *rand.Rand
	// next is the base of the next wait; Initial after a reset.
	next time.Duration
	// resumed is when the last wait ended (zero before the first wait);
	// a failure more than ResetAfter later resets next.
	resumed time.Time
}

func newBackoff(cfg Backoff, clk clock.Clock, rnd *rand.Rand) *backoffState {
	cfg = cfg.withDefaults()
	return &backoffState{cfg: cfg, clock: clk, rnd: rnd, next: cfg.Initial}
}

// step returns the next wait and advances the base.
func (b *backoffState) step() time.Duration {
	if !b.resumed.IsZero() && b.clock.Since(b.resumed) >= b.cfg.ResetAfter {
		b.next = b.cfg.Initial
	}
	base := b.next
	b.next = min(time.Duration(float64(base)*b.cfg.Factor), b.cfg.Max)
	return base + time.Duration(b.rnd.Float64()*b.cfg.Jitter*float64(base))
}

// wait sleeps for the next backoff on the clock. It returns false when ctx
// ended first.
func (b *backoffState) wait(ctx context.Context) bool {
	t := b.clock.NewTimer(b.step())
	defer t.Stop()
	select {
	case <-t.C():
		b.resumed = b.clock.Now()
		return true
	case <-ctx.Done():
		return false
	}
}
