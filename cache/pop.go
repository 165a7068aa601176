package cache

import "fmt"

// Pop blocks until a batch is pending (or the queue is closed), removes
// the oldest one and calls process with it, without holding the queue's
// lock, so producers are never blocked by the consumer. Pops are
// serialized: a second concurrent Pop waits until the first one's process
// returns, so batches are processed strictly in order.
//
// A batch is delivered once: if process fails, its error is returned
// wrapped and the batch is dropped (the next relist repairs the store).
// Once the queue is closed Pop returns ErrClosed, even if batches remain.
func (q *Queue[T]) Pop(process func(Batch[T]) error) error {
	q.mu.Lock()
	for (len(q.items) == 0 || q.inflight != nil) && !q.closed {
		q.cond.Wait()
	}
	if q.closed {
		q.mu.Unlock()
		return ErrClosed
	}
	b := q.items[0]
	q.items[0] = Batch[T]{}
	q.items = q.items[1:]
	q.inflight = &b
	q.mu.Unlock()

	defer q.finish()
	if err := process(b); err != nil {
		return fmt.Errorf("cache: processing %s batch: %w", b.Kind, err)
	}
	return nil
}

// finish ends the in-flight batch, even if process panicked.
func (q *Queue[T]) finish() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.inflight = nil
	if q.initialCount > 0 {
		q.initialCount--
	}
	q.cond.Broadcast()
}

// HasSynced reports whether the batches pending at the first enqueue
// (normally the initial relist's ReplaceBatch) have all been processed,
// that is, whether the consumer's store holds the initial list. It never
// turns false again.
func (q *Queue[T]) HasSynced() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.populated && q.initialCount == 0
}

// Len returns the number of pending batches (not counting one in flight).
func (q *Queue[T]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items)
}

// Close wakes every blocked Pop; from now on Pop and the enqueueing
// methods return ErrClosed. Closing twice is harmless.
func (q *Queue[T]) Close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	q.cond.Broadcast()
}

// IsClosed reports whether Close was called.
func (q *Queue[T]) IsClosed() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.closed
}
