package mvcc

// Backend is the ordered byte-key store the engine keeps its history in.
// Keys sort bytewise. An implementation needs no knowledge of revisions:
// the engine encodes everything into keys and values (see doc.go for the
// layout).
//
// Byte slices handed out by a transaction (from Get or a Cursor) belong to
// the backend and are valid only until that transaction ends or, in a
// WriteTx, until its next Put or Delete. The engine copies what it keeps.
type Backend interface {
	// View runs fn against a consistent snapshot: writes committed while fn
	// runs are invisible to it, and every write whose Update returned before
	// View was called is visible. fn must not retain the ReadTx. View
	// returns fn's error, or an error of its own if the snapshot could not
	// be taken.
	View(fn func(ReadTx) error) error
	// Update runs fn in a read-write transaction and commits it
	// atomically: either every Put and Delete of fn becomes visible, or
	// none does. Update returns nil only once the commit is durable by the
	// backend's standard (an fsync for a disk backend). If fn returns an
	// error, or the commit fails, nothing is applied and the error is
	// returned. Update is called by one goroutine at a time; it may run
	// concurrently with View.
	Update(fn func(WriteTx) error) error
	// Size returns the bytes the backend occupies (file size or memory
	// footprint of its contents).
	Size() (int64, error)
	// Close releases the backend. No transaction may be running.
	Close() error
}

// ReadTx reads one snapshot.
type ReadTx interface {
	// Get returns the value stored under key, or nil if the key is absent.
	// An empty value is returned as a non-nil empty slice.
	Get(key []byte) []byte
	// Cursor returns a new cursor over the snapshot. It is valid until the
	// transaction ends.
	Cursor() Cursor
}

// Cursor walks keys in ascending byte order.
type Cursor interface {
	// Seek moves to the first key >= key and returns it with its value; it
	// returns a nil key when there is none.
	Seek(key []byte) (k, v []byte)
	// Next moves to the following key; a nil key means the end. Next before
	// any Seek, or after the end, returns a nil key.
	Next() (k, v []byte)
}

// WriteTx is a read-write transaction. Reads see its own earlier writes.
type WriteTx interface {
	ReadTx
	// Put stores value under key, replacing any previous value. The
	// backend may retain both slices until the transaction ends (and the
	// memory backend for good): the caller must not modify them afterwards.
	Put(key, value []byte) error
	// Delete removes key; deleting an absent key is not an error. Cursors
	// opened before a Delete must not be used after it.
	Delete(key []byte) error
}
