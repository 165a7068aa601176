package memory

import (
	"bytes"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/google/btree"

	"github.com/setpoint-dev/setpoint/internal/storage/mvcc"
)

// errClosed is returned by a closed Backend.
var errClosed = errors.New("memory: backend closed")

type item struct {
	key, value []byte
}

func itemLess(a, b item) bool { return bytes.Compare(a.key, b.key) < 0 }

// Backend is an mvcc.Backend over a copy-on-write B-tree. Readers use a
// published snapshot that is never modified; Update mutates a lazy clone
// and publishes a clone of the result, so a failed Update leaves nothing
// behind and readers never wait for writers.
type Backend struct {
	// mu serialises Update; tree is touched only under it.
	mu   sync.Mutex
	tree *btree.BTreeG[item]
	// snap is the published snapshot: a clone of tree taken after the last
	// successful Update, never mutated.
	snap atomic.Pointer[btree.BTreeG[item]]
	// size is the sum of key and value lengths in snap.
	size   atomic.Int64
	closed atomic.Bool
}

var _ mvcc.Backend = (*Backend)(nil)

// NewBackend returns an empty in-memory backend.
func NewBackend() *Backend {
	b := &Backend{tree: btree.NewG(32, itemLess)}
	b.snap.Store(b.tree.Clone())
	return b
}

// View implements mvcc.Backend.
func (b *Backend) View(fn func(mvcc.ReadTx) error) error {
	if b.closed.Load() {
		return errClosed
	}
	return fn(readTx{t: b.snap.Load()})
}

// Update implements mvcc.Backend; "durable" means applied in memory.
func (b *Backend) Update(fn func(mvcc.WriteTx) error) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed.Load() {
		return errClosed
	}
	tx := &writeTx{readTx: readTx{t: b.tree.Clone()}}
	if err := fn(tx); err != nil {
		return err
	}
	b.tree = tx.t
	b.snap.Store(b.tree.Clone())
	b.size.Add(tx.sizeDelta)
	return nil
}

// Size implements mvcc.Backend: the bytes of all keys and values.
func (b *Backend) Size() (int64, error) { return b.size.Load(), nil }

// Close implements mvcc.Backend.
func (b *Backend) Close() error {
	b.closed.Store(true)
	return nil
}

type readTx struct {
	t *btree.BTreeG[item]
}

func (r readTx) Get(key []byte) []byte {
	it, ok := r.t.Get(item{key: key})
	if !ok {
		return nil
	}
	return it.value
}

func (r readTx) Cursor() mvcc.Cursor { return &cursor{t: r.t} }

type writeTx struct {
	readTx
	sizeDelta int64
}

func (w *writeTx) Put(key, value []byte) error {
	if value == nil {
		value = []byte{}
	}
	old, ok := w.t.ReplaceOrInsert(item{key: key, value: value})
	if ok {
		w.sizeDelta -= int64(len(old.key) + len(old.value))
	}
	w.sizeDelta += int64(len(key) + len(value))
	return nil
}

func (w *writeTx) Delete(key []byte) error {
	if old, ok := w.t.Delete(item{key: key}); ok {
		w.sizeDelta -= int64(len(old.key) + len(old.value))
	}
	return nil
}

// cursorBatch is how many items a cursor copies out of the tree at once.
const cursorBatch = 64

// cursor iterates a tree by copying batches of items; each refill starts
// after the last key seen.
type cursor struct {
	t   *btree.BTreeG[item]
	buf []item
	i   int // position in buf; i == len(buf) means exhausted
	// full is true when the last fill stopped at cursorBatch, so more
	// items may follow.
	full bool
}

func (c *cursor) fill(from []byte, inclusive bool) {
	c.buf, c.i, c.full = c.buf[:0], 0, false
	c.t.AscendGreaterOrEqual(item{key: from}, func(it item) bool {
		if !inclusive && bytes.Equal(it.key, from) {
			return true
		}
		if len(c.buf) == cursorBatch {
			c.full = true
			return false
		}
		c.buf = append(c.buf, it)
		return true
	})
}

func (c *cursor) current() ([]byte, []byte) {
	if c.i >= len(c.buf) {
		return nil, nil
	}
	return c.buf[c.i].key, c.buf[c.i].value
}

func (c *cursor) Seek(key []byte) ([]byte, []byte) {
	c.fill(key, true)
	return c.current()
}

func (c *cursor) Next() ([]byte, []byte) {
	if c.i >= len(c.buf) {
		return nil, nil
	}
	c.i++
	if c.i == len(c.buf) && c.full {
		c.fill(c.buf[c.i-1].key, false)
	}
	return c.current()
}
