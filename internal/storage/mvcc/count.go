package mvcc

import (
	"bytes"
	"strings"
)

// countAfter returns how many keys under prefix follow the key after at
// rev: a page's Remaining, as etcd's range count gives it. It counts the
// live index, in memory, and corrects the count for the keys changed since
// rev (read from the log of tx), so that its cost is that of walking keys
// in memory plus the changes since rev rather than the history on disk.
// When the live index is not at tx's revision (a commit landed around the
// snapshot), it scans the snapshot instead.
func (s *Store) countAfter(tx ReadTx, prefix, after string, rev int64) (int64, error) {
	cur, err := decodeRev(tx.Get(metaCurrent))
	if err != nil {
		return 0, err
	}
	changed, err := changedSince(tx, prefix, after, rev)
	if err != nil {
		return 0, err
	}
	s.liveMu.RLock()
	defer s.liveMu.RUnlock()
	if s.rev.Load() != cur {
		return countScan(tx, prefix, after, rev)
	}
	var n int64
	s.live.AscendGreaterOrEqual(liveKey{key: after + "\x00"}, func(lk liveKey) bool {
		if !strings.HasPrefix(lk.key, prefix) {
			return false
		}
		n++
		return true
	})
	for key, existed := range changed {
		if _, exists := s.live.Get(liveKey{key: key}); exists != existed {
			if existed {
				n++
			} else {
				n--
			}
		}
	}
	return n, nil
}

// changedSince returns the keys under prefix after the key after that
// changed after rev (up to tx's revision), each with whether it existed at
// rev.
func changedSince(tx ReadTx, prefix, after string, rev int64) (map[string]bool, error) {
	changed := map[string]bool{}
	c := tx.Cursor()
	for k, v := c.Seek(logKey(rev + 1)); k != nil; k, v = c.Next() {
		if _, ok := parseLogKey(k); !ok {
			break // past the log
		}
		key := string(v)
		if _, seen := changed[key]; seen || !strings.HasPrefix(key, prefix) || key <= after {
			continue
		}
		existed, err := existedAt(tx, key, rev)
		if err != nil {
			return nil, err
		}
		changed[key] = existed
	}
	return changed, nil
}

// existedAt reports whether key existed at rev: its newest index entry <=
// rev is not a tombstone.
func existedAt(tx ReadTx, key string, rev int64) (bool, error) {
	k, v := tx.Cursor().Seek(indexKey(key, rev))
	uk, _, ok := parseIndexKey(k)
	if !ok || !bytes.Equal(uk, []byte(key)) {
		return false, nil
	}
	rec, err := decodeRecord(v)
	if err != nil {
		return false, err
	}
	return !rec.tombstone, nil
}

// countScan counts the keys under prefix after the key after at rev by
// scanning the snapshot.
func countScan(tx ReadTx, prefix, after string, rev int64) (int64, error) {
	var n int64
	err := visitAt(tx, append([]byte{nsIndex}, prefix...), indexSeek(after+"\x00"), rev, func([]byte, int64, record) bool {
		n++
		return true
	})
	return n, err
}
