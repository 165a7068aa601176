package workqueue

import (
	"sync"
	"sync/atomic"
)

// intakeBatch is how many adds may wait in the intake before the adding
// goroutine applies them itself. It bounds both the delay of an add and the
// time a drain holds Queue.mu.
const intakeBatch = 128

// intake decouples producers from the queue's lock. A plain Add of an
// unmetered queue only appends the item here under intake.mu, a lock held for
// a few nanoseconds; whoever next takes Queue.mu applies the pending adds in
// order (drainLocked) before looking at any state. Every operation that reads
// or changes the queue's book-keeping drains first, so the queue behaves as if
// each Add had been applied at once: order, de-duplication and exclusion are
// unchanged.
//
// Lock order: Queue.mu before intake.mu.
type intake[T comparable] struct {
	mu sync.Mutex
	// pending holds the adds not yet applied, oldest first. Guarded by mu.
	pending []T
	// waiters counts Gets parked in Queue.cond. Guarded by mu. A Get
	// increments it only after finding pending empty under mu, so an Add
	// that sees zero knows its item will be found by that Get's next check.
	waiters int
	// closed is set by ShutDown under mu; later adds are dropped.
	closed bool
	// hasPending mirrors len(pending) > 0 so that draining an empty intake
	// costs one atomic load and no lock. It is stored under mu.
	hasPending atomic.Bool
	// spare is a drained buffer kept for reuse. Guarded by Queue.mu.
	spare []T
}

// add appends item unless the intake is closed and reports whether the
// caller must drain: a Get waits, or the batch is full.
func (in *intake[T]) add(item T) (drain bool) {
	in.mu.Lock()
	if in.closed {
		in.mu.Unlock()
		return false
	}
	if in.pending == nil {
		in.pending = make([]T, 0, intakeBatch)
	}
	in.pending = append(in.pending, item)
	if len(in.pending) == 1 {
		in.hasPending.Store(true)
	}
	drain = in.waiters > 0 || len(in.pending) >= intakeBatch
	in.mu.Unlock()
	return drain
}

// drainLocked applies the pending adds. q.mu must be held.
func (q *Queue[T]) drainLocked() {
	in := &q.in
	if !in.hasPending.Load() {
		return
	}
	in.mu.Lock()
	batch := in.pending
	in.pending = in.spare
	in.spare = nil
	in.hasPending.Store(false)
	in.mu.Unlock()
	q.applyLocked(batch)
}

// applyLocked adds batch in order and keeps its buffer for reuse. q.mu must
// be held.
func (q *Queue[T]) applyLocked(batch []T) {
	var zero T
	for i, it := range batch {
		q.addLocked(it, 0)
		batch[i] = zero // let the GC reclaim the item
	}
	if batch != nil {
		q.in.spare = batch[:0]
	}
}

// waitLocked parks the calling Get until an add or ShutDown may have made
// progress possible. q.mu must be held; it is held again on return. If adds
// are pending it returns at once so the caller drains them.
func (q *Queue[T]) waitLocked() {
	in := &q.in
	in.mu.Lock()
	if len(in.pending) > 0 {
		in.mu.Unlock()
		return
	}
	in.waiters++
	in.mu.Unlock()
	q.cond.Wait()
	in.mu.Lock()
	in.waiters--
	in.mu.Unlock()
}

// closeIntakeLocked drops later adds and applies those already pending.
// q.mu must be held, and shuttingDown not yet set, so the pending adds (made
// before ShutDown) are kept.
func (q *Queue[T]) closeIntakeLocked() {
	in := &q.in
	in.mu.Lock()
	in.closed = true
	batch := in.pending
	in.pending = nil
	in.hasPending.Store(false)
	in.mu.Unlock()
	q.applyLocked(batch)
}
