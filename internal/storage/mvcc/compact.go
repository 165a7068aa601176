package mvcc

import (
	"bytes"
	"context"
	"fmt"

	"github.com/setpoint-dev/setpoint/internal/storage"
)

// Compact discards the history before rev in one backend transaction,
// serialised with the committer.
func (s *Store) Compact(ctx context.Context, rev int64) error {
	if err := s.enter(); err != nil {
		return err
	}
	defer s.leave()
	if err := ctx.Err(); err != nil {
		return err
	}
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	comp := s.compacted.Load()
	if rev <= comp {
		return nil
	}
	if cur := s.rev.Load(); rev > cur {
		return fmt.Errorf("mvcc: compact: %w", &storage.FutureRevisionError{Requested: rev, Current: cur})
	}
	if err := s.b.Update(func(tx WriteTx) error { return compactTx(tx, comp, rev) }); err != nil {
		return fmt.Errorf("mvcc: compact to %d: %w", rev, err)
	}
	s.compacted.Store(rev)
	return nil
}

// compactTx removes, for every key written in (comp, rev], its index
// entries older than its newest entry <= rev, and that entry too when it is
// a tombstone; then the log entries in (comp, rev]. Keys not written in
// that range were reduced to at most one entry <= comp by the previous
// compaction, so they need no work.
func compactTx(tx WriteTx, comp, rev int64) error {
	c := tx.Cursor()
	keys := make(map[string]struct{})
	var dels [][]byte
	for k, v := c.Seek(logKey(comp + 1)); k != nil && k[0] == nsLog; k, v = c.Next() {
		r, ok := parseLogKey(k)
		if !ok {
			return fmt.Errorf("mvcc: corrupt log key %q", k)
		}
		if r > rev {
			break
		}
		keys[string(v)] = struct{}{}
		dels = append(dels, cloneBytes(k))
	}
	for key := range keys {
		pfx := indexPrefix(key)
		k, v := c.Seek(indexKey(key, rev))
		if k == nil || !bytes.HasPrefix(k, pfx) {
			continue
		}
		rec, err := decodeRecord(v)
		if err != nil {
			return fmt.Errorf("key %q: %w", key, err)
		}
		if rec.tombstone {
			dels = append(dels, cloneBytes(k))
		}
		for k, _ = c.Next(); k != nil && bytes.HasPrefix(k, pfx); k, _ = c.Next() {
			dels = append(dels, cloneBytes(k))
		}
	}
	for _, k := range dels {
		if err := tx.Delete(k); err != nil {
			return fmt.Errorf("delete %q: %w", k, err)
		}
	}
	if err := tx.Put(metaCompacted, encodeRev(rev)); err != nil {
		return fmt.Errorf("put compacted revision: %w", err)
	}
	return nil
}
