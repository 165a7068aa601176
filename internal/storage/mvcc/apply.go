package mvcc

import (
	"fmt"

	"github.com/setpoint-dev/setpoint/internal/storage"
)

// fillBatch runs inside the batch's transaction. In plan order it reads the
// current values needed by conflicts and deletes (seeing the batch's own
// earlier writes) and, through put, writes for every applied op its index
// entry and log entry, then the new current revision. put is nil when no op
// is applied. It returns the events of the applied ops in revision order.
func fillBatch(tx ReadTx, put func(k, v []byte) error, plans []plan, last int64) ([]storage.Event, error) {
	var events []storage.Event
	for i := range plans {
		p := &plans[i]
		op := p.op
		if p.conflict {
			cur, err := readKV(tx, op.key, p.before.liveKey)
			if err != nil {
				return nil, err
			}
			p.res.err = &storage.ConflictError{Key: op.key, Current: cur}
			continue
		}
		if p.rev == 0 {
			continue
		}
		ev := storage.Event{Type: storage.EventPut, Key: op.key, Revision: p.rev}
		var rec record
		switch op.kind {
		case opCreate:
			rec = record{createRev: p.rev, value: op.value}
			ev.Value, ev.Created = op.value, true
		case opUpdate:
			rec = record{createRev: p.before.createRev, value: op.value}
			ev.Value = op.value
		case opDelete:
			prev, err := readKV(tx, op.key, p.before.liveKey)
			if err != nil {
				return nil, err
			}
			p.res.prev = prev
			rec = record{tombstone: true}
			ev.Type, ev.PrevValue = storage.EventDelete, cloneBytes(prev.Value)
		}
		if err := put(indexKey(op.key, p.rev), encodeRecord(rec)); err != nil {
			return nil, fmt.Errorf("put index entry of %q: %w", op.key, err)
		}
		if err := put(logKey(p.rev), []byte(op.key)); err != nil {
			return nil, fmt.Errorf("put log entry %d: %w", p.rev, err)
		}
		events = append(events, ev)
	}
	if len(events) > 0 {
		if err := put(metaCurrent, encodeRev(last)); err != nil {
			return nil, fmt.Errorf("put current revision: %w", err)
		}
	}
	return events, nil
}

// readKV reads the value of a live key whose revisions are known.
func readKV(tx ReadTx, key string, lk liveKey) (storage.KeyValue, error) {
	v := tx.Get(indexKey(key, lk.modRev))
	if v == nil {
		return storage.KeyValue{}, fmt.Errorf("mvcc: index entry of %q at %d is missing", key, lk.modRev)
	}
	rec, err := decodeRecord(v)
	if err != nil {
		return storage.KeyValue{}, fmt.Errorf("key %q: %w", key, err)
	}
	if rec.tombstone {
		return storage.KeyValue{}, fmt.Errorf("mvcc: index entry of live key %q at %d is a tombstone", key, lk.modRev)
	}
	return storage.KeyValue{Key: key, Value: cloneBytes(rec.value), CreateRevision: lk.createRev, ModRevision: lk.modRev}, nil
}
