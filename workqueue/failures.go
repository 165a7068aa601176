package workqueue

import "math"

// The queue can keep the per-item failure count of one ExponentialRateLimiter
// in its own itemState instead of the limiter's map. NewRateLimiting binds
// the limiter it is given (or the first exponential limiter inside a
// MaxOfRateLimiter) to the queue if that limiter is fresh: unbound and with
// no failures recorded yet. From then on the limiter's When, Forget and
// NumRequeues read and write the count in the queue, so the limiter behaves
// exactly as before for every caller, and the queue's AddRateLimited and
// Forget update the count under the lock (or in the intake) they take
// anyway. An item with a count keeps its itemState after Done; Forget
// releases it.

// failLocked records a failure of item in its state. q.mu must be held.
func (q *Queue[T]) failLocked(item T) (before int) {
	st := q.stateLocked(item)
	n := st.failures
	if n < math.MaxInt32 {
		st.failures++
	}
	return int(n)
}

// forgetLocked clears item's failure count. q.mu must be held.
func (q *Queue[T]) forgetLocked(item T) {
	st := q.states[item]
	if st == nil || st.failures == 0 {
		return
	}
	st.failures = 0
	if st.flags == 0 {
		q.release(st)
	}
}

// recordFailure counts a failure of item and returns the count before it.
func (q *Queue[T]) recordFailure(item T) int {
	q.lockDrained()
	defer q.mu.Unlock()
	return q.failLocked(item)
}

// forgetFailures clears item's failure count. Without metrics it only
// buffers the clear in the intake; every reader drains first.
func (q *Queue[T]) forgetFailures(item T) {
	if q.metrics == nil && q.enqueue(item, opForget) {
		return
	}
	q.lockDrained()
	q.forgetLocked(item)
	q.mu.Unlock()
}

// numFailures returns item's failure count.
func (q *Queue[T]) numFailures(item T) int {
	q.lockDrained()
	defer q.mu.Unlock()
	if st := q.states[item]; st != nil {
		return int(st.failures)
	}
	return 0
}
