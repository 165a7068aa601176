package mvcc

import (
	"context"
	"fmt"
	"runtime"

	"github.com/setpoint-dev/setpoint/internal/storage"
)

type opKind uint8

const (
	opCreate opKind = iota
	opUpdate
	opDelete
)

// writeOp is one write handed to the committer.
type writeOp struct {
	kind     opKind
	key      string
	value    []byte // a private copy, never modified after submission
	expected int64  // expected ModRevision (update, delete; 0 = any for delete)
	ctx      context.Context
	done     chan writeResult // capacity 1; receives exactly one result
}

type writeResult struct {
	rev  int64
	prev storage.KeyValue // the deleted key, for deletes
	err  error
}

// Create stores value under key if it does not exist.
func (s *Store) Create(ctx context.Context, key string, value []byte) (int64, error) {
	r := s.submit(ctx, &writeOp{kind: opCreate, key: key, value: cloneBytes(value)})
	return r.rev, r.err
}

// Update replaces the value of key if its ModRevision is expectedRevision.
func (s *Store) Update(ctx context.Context, key string, value []byte, expectedRevision int64) (int64, error) {
	r := s.submit(ctx, &writeOp{kind: opUpdate, key: key, value: cloneBytes(value), expected: expectedRevision})
	return r.rev, r.err
}

// Delete removes key if its ModRevision is expectedRevision (0: any).
func (s *Store) Delete(ctx context.Context, key string, expectedRevision int64) (int64, storage.KeyValue, error) {
	r := s.submit(ctx, &writeOp{kind: opDelete, key: key, expected: expectedRevision})
	return r.rev, r.prev, r.err
}

// submit hands op to the committer and waits for its outcome. Once op is
// queued the outcome is awaited even if ctx ends, so that the caller never
// sees a context error for a write that was applied: the committer drops
// ops whose context has ended before it plans them.
func (s *Store) submit(ctx context.Context, op *writeOp) writeResult {
	if err := validateKey(op.key); err != nil {
		return writeResult{err: err}
	}
	if err := s.enter(); err != nil {
		return writeResult{err: err}
	}
	defer s.leave()
	op.ctx = ctx
	op.done = make(chan writeResult, 1)
	select {
	case s.ops <- op:
	case <-ctx.Done():
		return writeResult{err: ctx.Err()}
	}
	return <-op.done
}

// commitLoop is the committer goroutine: it takes every pending write (up to
// maxBatch) and commits them together.
func (s *Store) commitLoop() {
	defer close(s.committerDone)
	batch := make([]*writeOp, 0, s.maxBatch)
	for {
		select {
		case op := <-s.ops:
			batch = append(batch[:0], op)
		case <-s.stopc:
			// Close waited for every writer, so no op is queued.
			return
		}
		// Let writers that were just acknowledged queue their next op:
		// with N concurrent writers this doubles the typical batch (from
		// about N/2, the half that queued during the previous commit, to
		// nearly N) at the cost of one scheduler yield.
		runtime.Gosched()
	fill:
		for len(batch) < s.maxBatch {
			select {
			case op := <-s.ops:
				batch = append(batch, op)
			default:
				break fill
			}
		}
		s.commitBatch(batch)
		clear(batch)
	}
}

// keyState is a key's state while a batch is planned.
type keyState struct {
	liveKey
	exists bool
}

// plan is the decided outcome of one op of a batch.
type plan struct {
	op  *writeOp
	rev int64 // > 0: the op is applied at this revision
	// before is the key's state before the op (for conflicts, updates and
	// deletes).
	before   keyState
	conflict bool // CAS failed; err is filled in from the backend
	res      writeResult
}

// commitBatch decides every op against the current state in order,
// commits the successful ones in one backend transaction, then publishes
// their events and acknowledges every writer.
func (s *Store) commitBatch(batch []*writeOp) {
	s.commitMu.Lock()
	defer s.commitMu.Unlock()

	plans, overlay, last := s.planBatch(batch)
	var events []storage.Event
	fill := func(tx ReadTx, put func(k, v []byte) error) error {
		var err error
		events, err = fillBatch(tx, put, plans, last)
		return err
	}
	var err error
	switch {
	case last > s.rev.Load():
		err = s.b.Update(func(tx WriteTx) error { return fill(tx, tx.Put) })
	case anyConflict(plans):
		err = s.b.View(func(tx ReadTx) error { return fill(tx, nil) })
	}
	if err != nil {
		s.log.Error("mvcc: batch commit failed", "ops", len(batch), "err", err)
		for _, p := range plans {
			p.op.done <- writeResult{err: fmt.Errorf("mvcc: commit: %w", err)}
		}
		return
	}
	if len(events) > 0 {
		s.liveMu.Lock()
		for _, st := range overlay {
			if st.exists {
				s.live.ReplaceOrInsert(st.liveKey)
			} else {
				s.live.Delete(st.liveKey)
			}
		}
		// Under liveMu, so that a reader holding it sees rev match live.
		s.rev.Store(last)
		s.liveMu.Unlock()
		s.hub.publish(events, last)
	}
	for _, p := range plans {
		p.op.done <- p.res
	}
}

func anyConflict(plans []plan) bool {
	for _, p := range plans {
		if p.conflict {
			return true
		}
	}
	return false
}

// planBatch decides each op in order against the live index plus the
// effects of the earlier ops of the batch (overlay), assigning consecutive
// revisions to the ops that succeed. last is the last assigned revision
// (the current revision if none).
func (s *Store) planBatch(batch []*writeOp) (plans []plan, overlay map[string]keyState, last int64) {
	plans = make([]plan, len(batch))
	overlay = make(map[string]keyState)
	last = s.rev.Load()
	lookup := func(key string) keyState {
		if st, ok := overlay[key]; ok {
			return st
		}
		lk, ok := s.live.Get(liveKey{key: key})
		return keyState{liveKey: lk, exists: ok}
	}
	for i, op := range batch {
		p := &plans[i]
		p.op = op
		if err := op.ctx.Err(); err != nil {
			p.res.err = err
			continue
		}
		st := lookup(op.key)
		p.before = st
		switch {
		case op.kind == opCreate && st.exists:
			p.res.err = fmt.Errorf("mvcc: create %q: %w", op.key, storage.ErrKeyExists)
			continue
		case op.kind != opCreate && !st.exists:
			p.res.err = fmt.Errorf("mvcc: write %q: %w", op.key, storage.ErrNotFound)
			continue
		case op.kind == opUpdate && st.modRev != op.expected,
			op.kind == opDelete && op.expected != 0 && st.modRev != op.expected:
			p.conflict = true
			continue
		}
		last++
		p.rev = last
		p.res.rev = last
		switch op.kind {
		case opCreate:
			overlay[op.key] = keyState{liveKey{op.key, last, last}, true}
		case opUpdate:
			overlay[op.key] = keyState{liveKey{op.key, st.createRev, last}, true}
		case opDelete:
			overlay[op.key] = keyState{liveKey{key: op.key}, false}
		}
	}
	return plans, overlay, last
}
