// Package expectations remembers, per controller key, how many creations
// and deletions a controller has issued but not yet seen in its informer.
// It is what keeps a controller whose watch lags behind its own writes
// from acting twice: after creating N pods, the controller must not
// compute "too few pods" again from a cache that does not show them yet.
//
// # Calling protocol
//
//  1. Before issuing writes, the controller records them: ExpectCreations
//     (or ExpectDeletions, or UIDTracking.ExpectDeletions with the keys of
//     the objects it is about to delete).
//  2. For each write that fails, the controller lowers the expectation at
//     once (CreationObserved / DeletionObserved): the informer will never
//     see it.
//  3. The informer's handlers call CreationObserved when an object of the
//     controller appears and DeletionObserved when one disappears (or gets
//     a deletionTimestamp).
//  4. A sync creates or deletes only when SatisfiedExpectations is true;
//     otherwise it may still update status.
//  5. When the controller's object is deleted, DeleteExpectations forgets
//     its record.
//
// # Invariants
//
//   - SatisfiedExpectations(key) is true when no record exists, when the
//     record's adds and deletes are both <= 0, or when the record was set
//     more than TTL (5 minutes) ago by the injected clock: a lost watch
//     event delays a controller by at most TTL, never forever.
//   - Set replaces the record and restarts its TTL; Raise and Lower change
//     counts only. Counts may go negative (an object observed that was not
//     expected); that still counts as satisfied.
//   - UIDTracking.DeletionObserved lowers the delete count only for a key
//     that was recorded for that controller, and at most once per key, so
//     deletions done by someone else never eat up an expectation.
//   - All methods are safe for concurrent use.
package expectations
