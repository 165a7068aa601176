package mvcc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
)

// Namespaces of the backend keyspace (see doc.go, "Layout").
const (
	nsIndex byte = 'k' // 'k' userKey 0x00 be64(^rev) -> record
	nsLog   byte = 'l' // 'l' be64(rev) -> userKey
	nsMeta  byte = 'm' // 'm' name -> be64
)

// keySep ends the user key inside an index key. User keys may not contain
// it, which keeps index keys in user-key order.
const keySep byte = 0x00

// revSuffixLen is the length of keySep plus the encoded revision.
const revSuffixLen = 1 + 8

var (
	metaCurrent   = []byte("mcurrent")
	metaCompacted = []byte("mcompacted")
)

// ErrInvalidKey is returned for an empty key or one containing a NUL byte.
var ErrInvalidKey = errors.New("mvcc: invalid key (empty or containing NUL)")

func validateKey(key string) error {
	if key == "" || strings.IndexByte(key, keySep) >= 0 {
		return fmt.Errorf("%w: %q", ErrInvalidKey, key)
	}
	return nil
}

// indexPrefix is the common prefix of every index entry of userKey.
func indexPrefix(userKey string) []byte {
	b := make([]byte, 0, 1+len(userKey)+revSuffixLen)
	b = append(b, nsIndex)
	b = append(b, userKey...)
	return append(b, keySep)
}

// indexKey is the index entry of userKey at rev. Revisions are stored
// inverted so that the entries of one key run from newest to oldest: the
// first entry at or after indexKey(k, r) is the newest one <= r.
func indexKey(userKey string, rev int64) []byte {
	b := indexPrefix(userKey)
	return binary.BigEndian.AppendUint64(b, ^uint64(rev))
}

// afterIndexKeys is the first position past every index entry of userKey.
func afterIndexKeys(userKey []byte) []byte {
	b := make([]byte, 0, 2+len(userKey))
	b = append(b, nsIndex)
	b = append(b, userKey...)
	return append(b, keySep+1)
}

// parseIndexKey splits an index key; ok is false for keys of another
// namespace or of the wrong shape.
func parseIndexKey(k []byte) (userKey []byte, rev int64, ok bool) {
	if len(k) < 1+1+revSuffixLen || k[0] != nsIndex || k[len(k)-revSuffixLen] != keySep {
		return nil, 0, false
	}
	userKey = k[1 : len(k)-revSuffixLen]
	rev = int64(^binary.BigEndian.Uint64(k[len(k)-8:]))
	return userKey, rev, true
}

// indexSeek is the position of the first index entry whose user key is >=
// from. from may contain NUL (a pagination StartKey does): since stored
// keys never do, "key >= a\x00..." means "key > a".
func indexSeek(from string) []byte {
	if i := strings.IndexByte(from, keySep); i >= 0 {
		return afterIndexKeys([]byte(from[:i]))
	}
	b := make([]byte, 0, 2+len(from))
	b = append(b, nsIndex)
	b = append(b, from...)
	return append(b, keySep)
}

func logKey(rev int64) []byte {
	return binary.BigEndian.AppendUint64([]byte{nsLog}, uint64(rev))
}

func parseLogKey(k []byte) (rev int64, ok bool) {
	if len(k) != 9 || k[0] != nsLog {
		return 0, false
	}
	return int64(binary.BigEndian.Uint64(k[1:])), true
}

func encodeRev(rev int64) []byte {
	return binary.BigEndian.AppendUint64(nil, uint64(rev))
}

func decodeRev(b []byte) (int64, error) {
	if b == nil {
		return 0, nil
	}
	if len(b) != 8 {
		return 0, fmt.Errorf("mvcc: corrupt revision value of %d bytes", len(b))
	}
	return int64(binary.BigEndian.Uint64(b)), nil
}

// record is the value of an index entry.
type record struct {
	// tombstone marks a deletion; a tombstone has no value and no
	// createRev.
	tombstone bool
	// createRev is the revision that created this generation of the key.
	createRev int64
	value     []byte
}

const flagTombstone byte = 1

func encodeRecord(r record) []byte {
	b := make([]byte, 0, 1+binary.MaxVarintLen64+len(r.value))
	var flags byte
	if r.tombstone {
		flags |= flagTombstone
	}
	b = append(b, flags)
	b = binary.AppendUvarint(b, uint64(r.createRev))
	return append(b, r.value...)
}

// decodeRecord parses b; the returned value aliases b.
func decodeRecord(b []byte) (record, error) {
	if len(b) < 2 {
		return record{}, fmt.Errorf("mvcc: corrupt record of %d bytes", len(b))
	}
	cr, n := binary.Uvarint(b[1:])
	if n <= 0 {
		return record{}, errors.New("mvcc: corrupt record revision")
	}
	return record{tombstone: b[0]&flagTombstone != 0, createRev: int64(cr), value: b[1+n:]}, nil
}

// cloneBytes copies b; the copy of an empty slice is a non-nil empty slice.
func cloneBytes(b []byte) []byte {
	return append(make([]byte, 0, len(b)), b...)
}
