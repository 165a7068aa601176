// Package memory is the in-process store: the mvcc engine over an
// in-memory copy-on-write B-tree (github.com/google/btree). It is for tests
// and single-process use; nothing survives the process.
//
// Backend publishes an immutable snapshot after every successful Update, so
// readers never wait for the writer and a failed Update applies nothing.
// "Durable" for this store means applied: a write is visible to every read
// and watch once it returns.
//
// New returns a store with default options; NewWithOptions lets tests make
// the watch buffer small. NewBackend exposes the backend itself, for
// engine tests that wrap it.
package memory
