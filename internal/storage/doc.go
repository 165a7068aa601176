// Package storage defines the contract between the API server and the
// revisioned key-value stores it runs on.
//
// # Model
//
// A store holds byte values under string keys. Every successful mutation
// (create, update, delete) is assigned the next value of one global,
// strictly increasing revision counter; that revision is what Kubernetes
// clients see as resourceVersion. A key's ModRevision is the revision of its
// last mutation and its CreateRevision the revision that created it.
//
// The store keeps the history of mutations from its compacted revision on,
// so that reads at a past revision and watches from a past revision are
// possible. Compact(rev) discards the history before rev; any later request
// that needs it fails with ErrCompacted, which the API server turns into
// 410 Gone.
//
// # Calling protocol
//
//   - Writes are compare-and-swap on ModRevision: Update and Delete name the
//     revision they expect the key to have (Delete may pass 0 to skip the
//     check). A mismatch returns ErrConflict and changes nothing.
//   - A write returns only once it is durable by the implementation's
//     standard (the memory store: applied; the bolt store: fsynced). Once
//     it has returned, every read and every watch reflects it.
//   - Watch(prefix, afterRev) delivers, in revision order and without gaps,
//     every event on keys under prefix whose revision is > afterRev. Events
//     for one revision are delivered at most once.
//   - Reads and writes are safe for concurrent use.
//
// Implementations: memory (tests, in-process) and boltdb (the durable
// default), both built on the mvcc engine; etcd fits the same contract
// (revision = etcd revision, CAS = Txn on mod_revision).
// The storagetest package holds the conformance suite every implementation
// must pass.
package storage
