package cache

import (
	"errors"
	"fmt"
	"slices"
	"sync"
)

// ErrClosed is returned by Pop, and by every enqueueing method, once the
// queue is closed.
var ErrClosed = errors.New("cache: queue closed")

// Queue is the in-order queue between a reflector and the store: every
// event is delivered, once, in the order the producer enqueued it; nothing
// is coalesced. See the package documentation for the calling protocol.
type Queue[T any] struct {
	keyFunc KeyFunc[T]
	// known is the store the consumer applies batches to; nil means none.
	known KeyLister[T]

	mu   sync.Mutex
	cond *sync.Cond
	// items are the pending batches, oldest first.
	items []Batch[T]
	// inflight is the batch Pop handed to process and whose process has
	// not returned; nil otherwise. Replace and Resync treat it as pending,
	// since the consumer may not have applied it to known yet.
	inflight *Batch[T]
	// populated becomes true at the first enqueue of any kind.
	populated bool
	// initialCount is the number of batches that were pending when
	// populated became true and whose processing has not finished.
	initialCount int
	closed       bool
}

// NewQueue returns an empty queue. known is the store the consumer keeps
// up to date with popped batches (nil if there is none); Replace and
// Resync read it.
func NewQueue[T any](keyFunc KeyFunc[T], known KeyLister[T]) *Queue[T] {
	q := &Queue[T]{keyFunc: keyFunc, known: known}
	q.cond = sync.NewCond(&q.mu)
	return q
}

// Add enqueues an Added delta.
func (q *Queue[T]) Add(obj T) error { return q.event(Added, obj) }

// Update enqueues an Updated delta.
func (q *Queue[T]) Update(obj T) error { return q.event(Updated, obj) }

// Delete enqueues a Deleted delta carrying obj as the final state.
func (q *Queue[T]) Delete(obj T) error { return q.event(Deleted, obj) }

func (q *Queue[T]) event(t DeltaType, obj T) error {
	key, err := q.keyFunc(obj)
	if err != nil {
		return fmt.Errorf("cache: queue %s: computing key: %w", t, err)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.push(Batch[T]{Kind: EventBatch, Deltas: []Delta[T]{{Type: t, Key: key, Object: obj}}})
}

// push appends b. Caller holds mu.
func (q *Queue[T]) push(b Batch[T]) error {
	if q.closed {
		return ErrClosed
	}
	q.items = append(q.items, b)
	if !q.populated {
		q.populated = true
		q.initialCount = len(q.items)
	}
	q.cond.Broadcast()
	return nil
}

// Replace enqueues a relist as one ReplaceBatch. Objects that the known
// store (as updated by the pending and in-flight batches) holds but list
// lacks get a Deleted delta with a DeletedFinalStateUnknown carrying their
// last known state; every listed object gets a Replaced delta. A key that
// cannot be computed fails the call and enqueues nothing.
func (q *Queue[T]) Replace(list []T, resourceVersion string) error {
	deltas := make([]Delta[T], 0, len(list))
	listed := make(map[string]struct{}, len(list))
	for _, obj := range list {
		key, err := q.keyFunc(obj)
		if err != nil {
			return fmt.Errorf("cache: queue replace: computing key: %w", err)
		}
		listed[key] = struct{}{}
		deltas = append(deltas, Delta[T]{Type: Replaced, Key: key, Object: obj})
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return ErrClosed
	}
	tombstones := q.vanished(listed)
	b := Batch[T]{Kind: ReplaceBatch, ResourceVersion: resourceVersion, Deltas: append(tombstones, deltas...)}
	return q.push(b)
}

// pendingLast returns, per key, the last delta of the in-flight and pending
// batches. Caller holds mu.
func (q *Queue[T]) pendingLast() map[string]Delta[T] {
	last := map[string]Delta[T]{}
	record := func(b *Batch[T]) {
		for _, d := range b.Deltas {
			last[d.Key] = d
		}
	}
	if q.inflight != nil {
		record(q.inflight)
	}
	for i := range q.items {
		record(&q.items[i])
	}
	return last
}

// vanished builds tombstones for the keys believed present that listed
// lacks, sorted by key. Caller holds mu.
func (q *Queue[T]) vanished(listed map[string]struct{}) []Delta[T] {
	last := q.pendingLast()
	var gone []string
	for key, d := range last {
		if _, ok := listed[key]; !ok && d.Type != Deleted {
			gone = append(gone, key)
		}
	}
	if q.known != nil {
		for _, key := range q.known.ListKeys() {
			_, ok := listed[key]
			_, pending := last[key]
			if !ok && !pending {
				gone = append(gone, key)
			}
		}
	}
	slices.Sort(gone)
	out := make([]Delta[T], 0, len(gone))
	for _, key := range gone {
		tomb := &DeletedFinalStateUnknown[T]{Key: key}
		if d, ok := last[key]; ok {
			tomb.Obj, tomb.ObjKnown = d.Object, true
		} else if obj, exists, err := q.known.GetByKey(key); err == nil && exists {
			tomb.Obj, tomb.ObjKnown = obj, true
		}
		out = append(out, Delta[T]{Type: Deleted, Key: key, Object: tomb.Obj, Tombstone: tomb})
	}
	return out
}

// Resync enqueues a ResyncBatch with a Sync delta for every object of the
// known store that has no pending or in-flight delta (those will be
// delivered anyway, and the store's copy of them may be stale). Nothing is
// enqueued when there is no such object or no known store.
func (q *Queue[T]) Resync() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return ErrClosed
	}
	if q.known == nil {
		return nil
	}
	last := q.pendingLast()
	keys := q.known.ListKeys()
	slices.Sort(keys)
	var deltas []Delta[T]
	for _, key := range keys {
		if _, pending := last[key]; pending {
			continue
		}
		obj, exists, err := q.known.GetByKey(key)
		if err != nil {
			return fmt.Errorf("cache: queue resync: reading %q: %w", key, err)
		}
		if exists {
			deltas = append(deltas, Delta[T]{Type: Sync, Key: key, Object: obj})
		}
	}
	if len(deltas) == 0 {
		return nil
	}
	return q.push(Batch[T]{Kind: ResyncBatch, Deltas: deltas})
}
