package workqueue

import (
	"sync"
	"sync/atomic"
)

// intakeBatch is how many adds may wait in the intake before the adding
// goroutine applies them itself. It bounds both the delay of an add and the
// time a drain holds Queue.mu.
const intakeBatch = 128

// Kinds of buffered operations.
const (
	opAdd     uint8 = iota // Add
	opFailAdd              // AddRateLimited through the queue's own failure count, no delay
	opForget               // Forget through the queue's own failure count
)

// op is one buffered operation on item.
type op[T comparable] struct {
	item T
	kind uint8
}

// intake decouples callers from the queue's lock. A plain Add of an
// unmetered queue (and, with the queue's own failure count, AddRateLimited
// without delay and Forget) only appends an op here under intake.mu, a lock
// held for a few nanoseconds; whoever next takes Queue.mu applies the pending
// ops in order (drainLocked) before looking at any state. Every operation that
// reads or changes the queue's book-keeping drains first, so the queue behaves
// as if each op had been applied at once: order, de-duplication, exclusion
// and failure counts are unchanged.
//
// Lock order: Queue.mu before intake.mu.
type intake[T comparable] struct {
	mu sync.Mutex
	// pending holds the ops not yet applied, oldest first. Guarded by mu.
	pending []op[T]
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
	spare []op[T]
}

// add appends an op unless the intake is closed. It reports whether the op
// was taken and whether the caller must drain: the batch is full, or the op
// may queue an item and a Get waits.
func (in *intake[T]) add(item T, kind uint8) (taken, drain bool) {
	in.mu.Lock()
	if in.closed {
		in.mu.Unlock()
		return false, false
	}
	if in.pending == nil {
		in.pending = make([]op[T], 0, intakeBatch)
	}
	in.pending = append(in.pending, op[T]{item: item, kind: kind})
	if len(in.pending) == 1 {
		in.hasPending.Store(true)
	}
	drain = len(in.pending) >= intakeBatch || in.waiters > 0 && kind != opForget
	in.mu.Unlock()
	return true, drain
}

// enqueue buffers an op and drains if add says so. It reports false if the
// intake is closed (the queue is shutting down) and the op was not taken.
func (q *Queue[T]) enqueue(item T, kind uint8) bool {
	taken, drain := q.in.add(item, kind)
	switch {
	case drain:
		q.mu.Lock()
	default:
		return taken
	}
	q.drainLocked() // pushes, which signals a waiting Get
	q.mu.Unlock()
	return taken
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

// applyLocked applies batch in order and keeps its buffer for reuse. q.mu
// must be held.
func (q *Queue[T]) applyLocked(batch []op[T]) {
	for i := range batch {
		o := &batch[i]
		switch o.kind {
		case opAdd:
			q.addLocked(o.item, 0)
		case opFailAdd:
			q.failLocked(o.item)
			q.addLocked(o.item, 0)
		case opForget:
			q.forgetLocked(o.item)
		}
		*o = op[T]{} // let the GC reclaim the item
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
