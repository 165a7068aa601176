package workqueue

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
}

// NewRateLimiting returns a queue configured by cfg that retries through
// limiter.
func NewRateLimiting[T comparable](limiter RateLimiter[T], cfg Config) *RateLimitingQueue[T] {
	return &RateLimitingQueue[T]{Queue: NewWithConfig[T](cfg), limiter: limiter}
}

// AddRateLimited implements RateLimitingInterface.
func (q *RateLimitingQueue[T]) AddRateLimited(item T) {
	if q.ShuttingDown() {
		return
	}
	q.AddAfter(item, q.limiter.When(item))
}

// Forget implements RateLimitingInterface.
func (q *RateLimitingQueue[T]) Forget(item T) { q.limiter.Forget(item) }

// NumRequeues implements RateLimitingInterface.
func (q *RateLimitingQueue[T]) NumRequeues(item T) int { return q.limiter.NumRequeues(item) }
