package workqueue

import (
	"slices"
	"time"
)

// RateLimitingInterface is a DelayingInterface that re-adds failed items after
// a wait decided by a RateLimiter.
type RateLimitingInterface[T comparable] interface {
	DelayingInterface[T]
	// AddRateLimited records a failure of item and adds it once the limiter
	// allows. Ignored after ShutDown.
	AddRateLimited(item T)
	// Forget clears item's failure history. Call it when item was processed
	// successfully; it does not remove item from the queue.
	Forget(item T)
	// NumRequeues reports the limiter's failure count of item.
	NumRequeues(item T) int
}

// RateLimitingQueue is a Queue with a RateLimiter; it implements
// RateLimitingInterface.
type RateLimitingQueue[T comparable] struct {
	*Queue[T]
	limiter RateLimiter[T]
	// exp, if set, is the exponential limiter whose failure counts this
	// queue holds (see bindQueue): limiter itself, or a child of limiter
	// when that is a MaxOfRateLimiter. others are then limiter's other
	// children, consulted as before. Both are fixed at construction.
	exp    *ExponentialRateLimiter[T]
	others []RateLimiter[T]
}

// NewRateLimiting returns a queue configured by cfg that retries through
// limiter. An ExponentialRateLimiter that has recorded no failures yet, given
// directly or as a child of a MaxOfRateLimiter (as DefaultControllerRateLimiter
// is), keeps its failure counts in the queue's per-item records from then on;
// see ExponentialRateLimiter.
func NewRateLimiting[T comparable](limiter RateLimiter[T], cfg Config) *RateLimitingQueue[T] {
	q := &RateLimitingQueue[T]{Queue: NewWithConfig[T](cfg), limiter: limiter}
	switch l := limiter.(type) {
	case *ExponentialRateLimiter[T]:
		if l.bindQueue(q.Queue) {
			q.exp = l
		}
	case *MaxOfRateLimiter[T]:
		for i, c := range l.limiters {
			if e, ok := c.(*ExponentialRateLimiter[T]); ok && e.bindQueue(q.Queue) {
				q.exp = e
				q.others = append(slices.Clip(l.limiters[:i]), l.limiters[i+1:]...)
				break
			}
		}
	}
	return q
}

// AddRateLimited implements RateLimitingInterface.
func (q *RateLimitingQueue[T]) AddRateLimited(item T) {
	if q.ShuttingDown() {
		return
	}
	if q.exp == nil {
		q.AddAfter(item, q.limiter.When(item))
		return
	}
	// The bound limiter's count lives in item's state: the same
	// bookkeeping as limiter.When, without a second map and lock.
	var d time.Duration
	for _, l := range q.others {
		d = max(d, l.When(item))
	}
	if d <= 0 && q.exp.neverDelays() && q.metrics == nil {
		q.enqueue(item, opFailAdd) // count and add, in order, at the next drain
		return
	}
	d = max(d, q.exp.delay(q.recordFailure(item)))
	q.AddAfter(item, d)
}

// Forget implements RateLimitingInterface.
func (q *RateLimitingQueue[T]) Forget(item T) { q.limiter.Forget(item) }

// NumRequeues implements RateLimitingInterface.
func (q *RateLimitingQueue[T]) NumRequeues(item T) int { return q.limiter.NumRequeues(item) }
