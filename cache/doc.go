// Package cache holds the client-side object caches that informers are
// built from: a thread-safe indexed store, typed listers over it, and the
// in-order queue that carries a reflector's events to the store.
//
// # Store and indexes
//
// ThreadSafeIndexer[T] maps a key (KeyFunc; for API objects
// MetaNamespaceKeyFunc gives "namespace/name", or "name" when
// cluster-scoped) to the latest object, and keeps any number of named
// secondary indexes. An IndexFunc files each object under zero or more
// string values; ByIndex and IndexKeys answer "which objects are filed
// under v", ListIndexFuncValues "which values are in use".
// NewObjectIndexer installs NamespaceIndex by default; owner-UID or by-node
// indexes are ordinary IndexFuncs, added at construction or later with
// AddIndexers.
//
// Invariants, kept under one lock:
//
//   - a key is filed under value v of index i exactly when the IndexFunc
//     returned v for the object currently stored under that key; updating
//     an object moves it, deleting it unfiles it, and a value whose last
//     key leaves is removed (no empty sets remain);
//   - index values are computed once, when the object is stored, and kept,
//     so later unfiling never depends on recomputing them;
//   - a write whose key or index values cannot be computed changes nothing;
//     Replace swaps the whole content at once.
//
// # Shared objects
//
// Stores and listers return the stored values themselves. With pointer
// types every reader shares one object: never modify what a cache returns;
// deep-copy it first. To catch violations in tests, build indexers with
// WithMutationDetector(JSONFingerprint[T]) or set the environment variable
// SETPOINT_CACHE_MUTATION_DETECTOR=true: each write then records a digest
// of the object, and CheckMutations (call it at the end of a test, or on a
// ticker with RunMutationChecks) returns a *MutationError with the keys of
// the objects that changed in place.
//
// # Listers
//
// Lister[T] reads an indexer keyed by MetaNamespaceKeyFunc:
// List(selector) over all namespaces, Namespace(ns).List(selector) through
// NamespaceIndex, and Get(name) / Namespace(ns).Get(name), which fail with
// the Kubernetes NotFound error (apierrors.IsNotFound) for the lister's
// GroupResource.
//
// # The queue and its calling protocol
//
// Queue[T] sits between one producer (the reflector) and one consumer (the
// informer's processing loop). It never coalesces: each call becomes one
// Batch, delivered once, in call order.
//
//   - The producer calls Add, Update and Delete for watch events, Replace
//     after every (re)list, and Resync on its resync period.
//   - The consumer owns the known-objects store passed to NewQueue: it is
//     the store's only writer, and it writes it only from Pop's callback.
//     The queue only reads it (in Replace and Resync).
//   - The consumer loops on Pop. For each Batch it first applies every
//     delta to the store, then dispatches per-object notifications:
//     EventBatch: Added/Updated store the object, Deleted removes it.
//     ReplaceBatch: one store.Replace with the objects of the Replaced
//     deltas, so that when handlers hear of any object of a relist the
//     store already holds the whole list; the tombstoned Deleted deltas
//     are removed by that same Replace.
//     ResyncBatch: the Sync deltas carry the store's own objects; the store
//     needs no write, handlers get an update with old == new.
//     Apply does exactly this and returns the notifications.
//
// Replace computes which objects vanished by overlaying the batches that
// are pending or in flight on the known store: a key believed present (in
// the store and not deleted since, or added by a pending delta) that the
// new list lacks gets a Deleted delta whose Tombstone
// (DeletedFinalStateUnknown) carries the last state the queue knew.
// HasSynced turns true once the batches pending at the first enqueue (the
// initial relist) have been processed. Close makes Pop return ErrClosed.
package cache
