package rest

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// RateLimiter is a token bucket: it holds up to burst tokens and refills at
// qps tokens per second. It is safe for concurrent use.
type RateLimiter struct {
	clock clock.Clock
	qps   float64
	burst float64

	mu sync.Mutex
	// tokens may go negative: each waiter reserves its token up front, so a
	// negative count is the debt that queued waiters are sleeping off.
	// Guarded by mu.
	tokens float64
	// last is when tokens was last brought up to date. Guarded by mu.
	last time.Time
}

// NewRateLimiter returns a full bucket. It returns nil when qps <= 0,
// meaning "no limit"; a nil *RateLimiter's Wait returns at once.
// burst < 1 is treated as 1.
func NewRateLimiter(qps float32, burst int, clk clock.Clock) *RateLimiter {
	if qps <= 0 {
		return nil
	}
	if burst < 1 {
		burst = 1
	}
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &RateLimiter{clock: clk, qps: float64(qps), burst: float64(burst), tokens: float64(burst), last: clk.Now()}
}

// Wait blocks until a token is available or ctx ends. On cancellation the
// reserved token is handed back and the context's error is returned
// (wrapped). Waiters are served in the order they called Wait.
func (r *RateLimiter) Wait(ctx context.Context) error {
	if r == nil {
		return nil
	}
	wait := r.reserve()
	if wait <= 0 {
		return nil
	}
	t := r.clock.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C():
		return nil
	case <-ctx.Done():
		r.mu.Lock()
		r.tokens++
		r.mu.Unlock()
		return fmt.Errorf("client rate limiter: %w", ctx.Err())
	}
}

// reserve takes one token, possibly into debt, and returns how long the
// caller must wait for it.
func (r *RateLimiter) reserve() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.clock.Now()
	r.tokens = min(r.burst, r.tokens+now.Sub(r.last).Seconds()*r.qps)
	r.last = now
	r.tokens--
	if r.tokens >= 0 {
		return 0
	}
	return time.Duration(-r.tokens / r.qps * float64(time.Second))
}
