package workqueue

import (
	"math"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/utils/clock"
)

// RateLimiter decides how long an item must wait before it is retried.
// Implementations are safe for concurrent use.
type RateLimiter[T comparable] interface {
	// When records a failure of item and returns how long to wait before
	// retrying it. It never returns a negative duration.
	When(item T) time.Duration
	// Forget clears item's failure history, typically after it succeeded.
	// Forget of an unknown item is a no-op.
	Forget(item T)
	// NumRequeues reports how many failures of item are recorded; limiters
	// that keep no per-item history return 0.
	NumRequeues(item T) int
}

// ExponentialRateLimiter waits base*2^n for the n-th (zero-based) failure of
// an item, capped at max.
//
// Given to NewRateLimiting (directly or inside a MaxOfRateLimiter) before any
// failure was recorded, the limiter keeps its counts in that queue's per-item
// records rather than a map of its own; its methods behave the same either
// way, also when called directly.
type ExponentialRateLimiter[T comparable] struct {
	base, max time.Duration

	// queue, once set, holds the failure counts; failures is then unused.
	// It is set at most once, under mu, while failures is empty.
	queue atomic.Pointer[Queue[T]]

	mu sync.Mutex
	// failures counts When calls per item since its last Forget; absent
	// means zero. Unused once queue is set.
	failures map[T]int
}

// NewExponentialRateLimiter returns a per-item exponential backoff limiter.
func NewExponentialRateLimiter[T comparable](base, max time.Duration) *ExponentialRateLimiter[T] {
	return &ExponentialRateLimiter[T]{base: base, max: max, failures: make(map[T]int)}
}

// When implements RateLimiter.
func (r *ExponentialRateLimiter[T]) When(item T) time.Duration {
	if q := r.queue.Load(); q != nil {
		return r.delay(q.recordFailure(item))
	}
	r.mu.Lock()
	if q := r.queue.Load(); q != nil { // bound meanwhile
		r.mu.Unlock()
		return r.delay(q.recordFailure(item))
	}
	n := r.failures[item]
	r.failures[item] = n + 1
	r.mu.Unlock()
	return r.delay(n)
}

// delay is the wait after the n-th (zero-based) failure.
func (r *ExponentialRateLimiter[T]) delay(n int) time.Duration {
	if n >= 63 {
		return r.max
	}
	d := float64(r.base) * float64(uint64(1)<<n)
	if d > float64(r.max) {
		return r.max
	}
	return time.Duration(d)
}

// neverDelays reports whether delay is at most zero for every n.
func (r *ExponentialRateLimiter[T]) neverDelays() bool {
	return r.base <= 0 || r.max <= 0
}

// bindQueue makes q hold the failure counts if r is unbound and has no
// failures recorded, and reports whether it did.
func (r *ExponentialRateLimiter[T]) bindQueue(q *Queue[T]) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.queue.Load() != nil || len(r.failures) > 0 {
		return false
	}
	r.queue.Store(q)
	return true
}

// Forget implements RateLimiter.
func (r *ExponentialRateLimiter[T]) Forget(item T) {
	if q := r.queue.Load(); q != nil {
		q.forgetFailures(item)
		return
	}
	r.mu.Lock()
	if q := r.queue.Load(); q != nil {
		r.mu.Unlock()
		q.forgetFailures(item)
		return
	}
	delete(r.failures, item)
	r.mu.Unlock()
}

// NumRequeues implements RateLimiter.
func (r *ExponentialRateLimiter[T]) NumRequeues(item T) int {
	if q := r.queue.Load(); q != nil {
		return q.numFailures(item)
	}
	r.mu.Lock()
	if q := r.queue.Load(); q != nil {
		r.mu.Unlock()
		return q.numFailures(item)
	}
	defer r.mu.Unlock()
	return r.failures[item]
}

// BucketRateLimiter is a token bucket shared by all items: it refills at qps
// tokens per second up to burst, and every When takes one token, waiting for
// it if the bucket is empty (the debt is carried, so waits queue up).
type BucketRateLimiter[T comparable] struct {
	qps   float64
	burst float64
	clock clock.PassiveClock

	mu sync.Mutex
	// tokens is the bucket's level at last; it is at most burst and negative
	// when reservations are outstanding.
	tokens float64
	last   time.Time
}

// NewBucketRateLimiter returns a full token bucket driven by clk (nil means
// the real clock).
func NewBucketRateLimiter[T comparable](qps float64, burst int, clk clock.PassiveClock) *BucketRateLimiter[T] {
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &BucketRateLimiter[T]{qps: qps, burst: float64(burst), clock: clk, tokens: float64(burst), last: clk.Now()}
}

// When implements RateLimiter.
func (r *BucketRateLimiter[T]) When(T) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.clock.Now()
	if elapsed := now.Sub(r.last); elapsed > 0 {
		r.tokens = math.Min(r.burst, r.tokens+elapsed.Seconds()*r.qps)
		r.last = now
	}
	r.tokens--
	if r.tokens >= 0 {
		return 0
	}
	return time.Duration(math.Ceil(-r.tokens / r.qps * float64(time.Second)))
}

// Forget implements RateLimiter; the bucket keeps no per-item state.
func (r *BucketRateLimiter[T]) Forget(T) {}

// NumRequeues implements RateLimiter; it is always 0.
func (r *BucketRateLimiter[T]) NumRequeues(T) int { return 0 }

// MaxOfRateLimiter waits the longest of its limiters' waits.
type MaxOfRateLimiter[T comparable] struct {
	limiters []RateLimiter[T]
}

// NewMaxOfRateLimiter combines limiters. Every When is passed to all of them,
// so each records the failure.
func NewMaxOfRateLimiter[T comparable](limiters ...RateLimiter[T]) *MaxOfRateLimiter[T] {
	return &MaxOfRateLimiter[T]{limiters: limiters}
}

// When implements RateLimiter.
func (r *MaxOfRateLimiter[T]) When(item T) time.Duration {
	var d time.Duration
	for _, l := range r.limiters {
		d = max(d, l.When(item))
	}
	return d
}

// Forget implements RateLimiter.
func (r *MaxOfRateLimiter[T]) Forget(item T) {
	for _, l := range r.limiters {
		l.Forget(item)
	}
}

// NumRequeues implements RateLimiter: the largest count of its limiters.
func (r *MaxOfRateLimiter[T]) NumRequeues(item T) int {
	n := 0
	for _, l := range r.limiters {
		n = max(n, l.NumRequeues(item))
	}
	return n
}

// DefaultControllerRateLimiter is what a controller should use unless it knows
// better: per-item exponential backoff from 5ms doubling up to 1000s, bounded
// overall by a 10 qps token bucket with burst 100. clk nil means real time.
func DefaultControllerRateLimiter[T comparable](clk clock.PassiveClock) RateLimiter[T] {
	return NewMaxOfRateLimiter[T](
		NewExponentialRateLimiter[T](5*time.Millisecond, 1000*time.Second),
		NewBucketRateLimiter[T](10, 100, clk),
	)
}
