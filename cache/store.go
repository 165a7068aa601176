package cache

// Reader is the read side of a store. Every object it returns is the very
// value the store holds (for pointer types, shared with every other reader):
// callers must treat it as read-only and deep-copy before changing it.
type Reader[T any] interface {
	// Get looks obj up by the key the store's KeyFunc derives from it. It
	// fails only when the key cannot be computed; a missing object is
	// reported by exists == false.
	Get(obj T) (item T, exists bool, err error)
	// GetByKey looks an object up by key. A missing key yields the zero T
	// and exists == false; it never fails for the in-memory store.
	GetByKey(key string) (item T, exists bool, err error)
	// List returns every stored object in no particular order; an empty
	// store yields an empty, non-nil slice.
	List() []T
	// ListKeys returns every stored key in no particular order.
	ListKeys() []string
}

// Writer is the write side of a store. A write that fails (the key or an
// index value cannot be computed) leaves the store unchanged.
type Writer[T any] interface {
	// Add stores obj under its key, replacing any object already there.
	Add(obj T) error
	// Update is Add: the store does not distinguish creation from change.
	Update(obj T) error
	// Delete removes the object with obj's key. Deleting a missing key is
	// not an error.
	Delete(obj T) error
	// Replace atomically swaps the whole content for list. Readers see
	// either the old or the new content, never a mix. resourceVersion is
	// the version the list was read at; the in-memory store ignores it.
	// Two objects of list with the same key: the later one wins.
	Replace(list []T, resourceVersion string) error
}

// Store is a keyed, thread-safe object store.
type Store[T any] interface {
	Reader[T]
	Writer[T]
}

// IndexReader answers queries over named indexes. Querying an index name
// that was never added is an error.
type IndexReader[T any] interface {
	// Index returns the objects that share at least one value of the named
	// index with obj (each object once).
	Index(indexName string, obj T) ([]T, error)
	// ByIndex returns the objects filed under value in the named index.
	ByIndex(indexName, value string) ([]T, error)
	// IndexKeys returns the keys of the objects filed under value.
	IndexKeys(indexName, value string) ([]string, error)
	// ListIndexFuncValues returns every value that at least one stored
	// object is currently filed under; values whose last object left are
	// gone. An unknown index yields an empty list.
	ListIndexFuncValues(indexName string) []string
}

// Indexer is a Store with named secondary indexes.
type Indexer[T any] interface {
	Store[T]
	IndexReader[T]
	// AddIndexers installs more indexes and files every stored object in
	// them. A name that is already installed is an error, and then none of
	// the new indexes is installed.
	AddIndexers(newIndexers Indexers[T]) error
}

// KeyLister is what the Queue needs from its known-objects store: the
// store the consumer applies popped batches to.
type KeyLister[T any] interface {
	ListKeys() []string
	GetByKey(key string) (item T, exists bool, err error)
}
