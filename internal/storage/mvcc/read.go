package mvcc

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/setpoint-dev/setpoint/internal/storage"
)

// Get returns the current value of key from a backend snapshot.
func (s *Store) Get(ctx context.Context, key string) (storage.KeyValue, error) {
	if err := validateKey(key); err != nil {
		return storage.KeyValue{}, err
	}
	if err := s.enter(); err != nil {
		return storage.KeyValue{}, err
	}
	defer s.leave()
	var kv storage.KeyValue
	found := false
	err := s.b.View(func(tx ReadTx) error {
		pfx := indexPrefix(key)
		k, v := tx.Cursor().Seek(pfx)
		if k == nil || !bytes.HasPrefix(k, pfx) {
			return nil
		}
		_, rev, ok := parseIndexKey(k)
		if !ok {
			return fmt.Errorf("mvcc: corrupt index key %q", k)
		}
		rec, err := decodeRecord(v)
		if err != nil || rec.tombstone {
			return err
		}
		kv = storage.KeyValue{Key: key, Value: cloneBytes(rec.value), CreateRevision: rec.createRev, ModRevision: rev}
		found = true
		return nil
	})
	if err != nil {
		return storage.KeyValue{}, fmt.Errorf("mvcc: get %q: %w", key, err)
	}
	if !found {
		return storage.KeyValue{}, fmt.Errorf("mvcc: get %q: %w", key, storage.ErrNotFound)
	}
	return kv, nil
}

// List reads the keys under prefix as of opts.Revision from one backend
// snapshot (see storage.Reader).
func (s *Store) List(ctx context.Context, prefix string, opts storage.ListOptions) (storage.ListResult, error) {
	if opts.Revision < 0 || opts.Limit < 0 {
		return storage.ListResult{}, fmt.Errorf("mvcc: list %q: negative revision or limit", prefix)
	}
	if err := s.enter(); err != nil {
		return storage.ListResult{}, err
	}
	defer s.leave()
	var res storage.ListResult
	err := s.b.View(func(tx ReadTx) error {
		rev, err := readableRevision(tx, opts.Revision)
		if err != nil {
			return err
		}
		res.Revision = rev
		if strings.IndexByte(prefix, keySep) >= 0 {
			return nil // no stored key contains NUL
		}
		from := max(prefix, opts.StartKey)
		if err := scanAt(tx, append([]byte{nsIndex}, prefix...), indexSeek(from), rev, opts.Limit, &res); err != nil || !res.More || !opts.CountRemaining {
			return err
		}
		res.Remaining, err = s.countAfter(tx, prefix, res.KVs[len(res.KVs)-1].Key, rev)
		return err
	})
	if err != nil {
		return storage.ListResult{}, fmt.Errorf("mvcc: list %q: %w", prefix, err)
	}
	return res, nil
}

// readableRevision resolves a requested revision (0 = current) against the
// snapshot's meta revisions.
func readableRevision(tx ReadTx, requested int64) (int64, error) {
	cur, err := decodeRev(tx.Get(metaCurrent))
	if err != nil {
		return 0, err
	}
	comp, err := decodeRev(tx.Get(metaCompacted))
	if err != nil {
		return 0, err
	}
	if requested == 0 {
		return cur, nil
	}
	if requested > cur {
		return 0, &storage.FutureRevisionError{Requested: requested, Current: cur}
	}
	if requested < comp {
		return 0, &storage.CompactedError{Requested: requested, Compacted: comp}
	}
	return requested, nil
}

// scanAt appends to res, in key order, the keys whose index entries start
// with pfx, from position seek on, as they were at rev, up to limit (0: no
// limit); it sets More when a key follows the last one returned.
func scanAt(tx ReadTx, pfx, seek []byte, rev int64, limit int, res *storage.ListResult) error {
	return visitAt(tx, pfx, seek, rev, func(userKey []byte, modRev int64, rec record) bool {
		if limit > 0 && len(res.KVs) == limit {
			res.More = true
			return false
		}
		res.KVs = append(res.KVs, storage.KeyValue{
			Key: string(userKey), Value: cloneBytes(rec.value),
			CreateRevision: rec.createRev, ModRevision: modRev,
		})
		return true
	})
}

// visitAt calls fn, in key order, for each key whose index entries start
// with pfx, from position seek on, that existed at rev: with its newest
// entry <= rev (keys whose newest such entry is a tombstone are skipped).
// The slices fn gets alias the transaction's; fn returns false to stop.
func visitAt(tx ReadTx, pfx, seek []byte, rev int64, fn func(userKey []byte, modRev int64, rec record) bool) error {
	c := tx.Cursor()
	k, v := c.Seek(seek)
	for k != nil && bytes.HasPrefix(k, pfx) {
		userKey, r, ok := parseIndexKey(k)
		if !ok {
			return fmt.Errorf("mvcc: corrupt index key %q", k)
		}
		if r > rev {
			// Newer than the snapshot: jump to the newest entry <= rev.
			k, v = c.Seek(indexKey(string(userKey), rev))
			uk, r2, ok := parseIndexKey(k)
			if !ok || !bytes.Equal(uk, userKey) {
				continue // the key did not exist at rev; k is past it
			}
			r = r2
		}
		rec, err := decodeRecord(v)
		if err != nil {
			return fmt.Errorf("key %q: %w", userKey, err)
		}
		if !rec.tombstone && !fn(userKey, r, rec) {
			return nil
		}
		// Step to the next user key: usually the next entry (compacted
		// history), otherwise seek past this key's older entries.
		k, v = c.Next()
		if uk, _, ok := parseIndexKey(k); ok && bytes.Equal(uk, userKey) {
			k, v = c.Seek(afterIndexKeys(userKey))
		}
	}
	return nil
}

// Count returns the number of live keys under prefix from the in-memory
// index.
func (s *Store) Count(ctx context.Context, prefix string) (int64, error) {
	if err := s.enter(); err != nil {
		return 0, err
	}
	defer s.leave()
	var n int64
	s.liveMu.RLock()
	s.live.AscendGreaterOrEqual(liveKey{key: prefix}, func(lk liveKey) bool {
		if !strings.HasPrefix(lk.key, prefix) {
			return false
		}
		n++
		return true
	})
	s.liveMu.RUnlock()
	return n, nil
}

// CurrentRevision returns the revision of the last durable commit.
func (s *Store) CurrentRevision(ctx context.Context) (int64, error) {
	if err := s.enter(); err != nil {
		return 0, err
	}
	defer s.leave()
	return s.rev.Load(), nil
}

// CompactedRevision returns the revision of the last compaction (0 if none).
func (s *Store) CompactedRevision(ctx context.Context) (int64, error) {
	if err := s.enter(); err != nil {
		return 0, err
	}
	defer s.leave()
	return s.compacted.Load(), nil
}
