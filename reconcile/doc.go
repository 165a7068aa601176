// Package reconcile is the contract between a controller and the code that
// does its work.
//
// A controller hands a Reconciler one Request at a time: the namespace and
// name of an object whose actual state may differ from its desired state.
// The Request carries no event and no object. The reconciler reads the
// current state (from a cache or the API server), acts to converge it, and
// reports with a Result and an error. Because only a key is passed,
// reconciling is level-triggered: ten changes to an object that pile up
// while it waits cost one call, and a call for an object that no longer
// exists is normal (it was deleted; clean up or return nil).
//
// # What the controller does with the answer
//
//   - nil error, zero Result: done; the key's failure history is cleared.
//   - nil error, RequeueAfter > 0: done for now; the key is reconciled
//     again after that duration (history cleared).
//   - nil error, Requeue: reconcile again after the key's backoff.
//   - an error wrapped with TerminalError: logged and counted, never
//     retried. Use it for errors a retry cannot fix (invalid spec).
//   - a conflict (apierrors.IsConflict): retried at once, without backoff,
//     since the cause (a stale read) is usually gone by the next read.
//   - an API error retrying cannot fix (422 Invalid, 400 BadRequest; 403
//     and 404 too when the controller is configured so): logged once, not
//     retried, as a terminal error (package controller, Classify and
//     Options.NotRetried).
//   - any other error: retried with per-key exponential backoff, until the
//     controller's MaxRetries, if it has one, drops the request.
//
// A Result is ignored when the error is non-nil.
//
// # Invariants
//
// A Reconciler is called concurrently for different Requests (up to the
// controller's worker count) but never concurrently for the same Request.
// It must be idempotent: the same Request may be reconciled any number of
// times, including after the object is gone.
package reconcile
