// Package storagetest is the conformance suite every storage.Store
// implementation runs from its own tests:
//
//	func TestConformance(t *testing.T) {
//		storagetest.Run(t, func(t *testing.T) storage.Store { return memory.New() })
//	}
//
// Run checks CRUD with compare-and-swap, List with prefix, revision,
// StartKey, Limit and More, reads of the past, compaction, watches (from the
// past, live, progress notifications, cancellation, Stop, Close, slow
// consumers), concurrent writers, and then runs a metamorphic test: random
// operation sequences from many seeds checked against a trivially simple
// model (the full event log, replayed). Every subtest gets a fresh store
// and verifies with goleak that no goroutine outlives it.
//
// Assumptions about the store beyond the letter of the contract: it is used
// by the suite alone (revisions move only by the suite's writes); every
// method but Close returns storage.ErrClosed after Close; Watch with an
// afterRevision above the current revision fails with
// storage.ErrFutureRevision; a watcher with SlowWatcherEvents undelivered
// events is ended with storage.ErrWatcherTooSlow; and a progress
// notification requested once every write has returned carries the
// current revision. Watch assertions never wait on a timer: to check that a
// watch delivered exactly the expected events, the suite requests a
// progress notification and reads up to it.
//
// BenchmarkCreate and BenchmarkList are shared benchmark bodies.
package storagetest
