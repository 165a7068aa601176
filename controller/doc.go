// Package controller runs a reconcile.Reconciler over a workqueue.
//
// A Controller owns a rate-limited workqueue of reconcile.Requests
// (package workqueue, default rate limiter: per-key exponential backoff
// from 5ms to 1000s under a 10 qps / 100 burst bucket), the Sources that
// fill it, and MaxConcurrentReconciles workers that drain it. The queue
// guarantees that one Request is never reconciled by two workers at once,
// however many workers run.
//
// # Protocol
//
//	c, _ := controller.New("configmaps", r, controller.Options{MaxConcurrentReconciles: 4})
//	_ = c.Watch(controller.Kind(inf, "v1 configmaps", handler.Object[*corev1.ConfigMap]()))
//	err := c.Start(ctx) // blocks until ctx ends
//
// Start registers every Source's handler, waits up to CacheSyncTimeout for
// all of them to deliver their initial lists (the error names the
// resources that did not sync and why: "timed out waiting for cache of
// apps/v1 deployments to sync: ..."), then starts the workers. When ctx
// ends, workers stop taking new requests, the queue is drained of in-flight
// work (reconciles see their context cancelled and are waited for),
// queued requests are dropped, and Start returns nil. A Controller starts
// once; Watch must be called before Start.
//
// # Outcomes
//
// Each reconcile's outcome is applied as package reconcile documents. An
// error is first given a class by Classify (the "class" label of
// controller_runtime_reconcile_errors_total):
//
//	terminal     wrapped by reconcile.TerminalError
//	panic        the reconciler panicked (recovered, logged with its stack)
//	conflict     409 Conflict (apierrors.IsConflict)
//	invalid      422 Invalid
//	bad_request  400 BadRequest
//	forbidden    403 Forbidden
//	not_found    404 NotFound
//	other        anything else (429, 5xx, timeouts, transport errors,
//	             409 AlreadyExists)
//
// then:
//
//   - terminal, or a class in Options.NotRetried (default
//     DefaultNotRetried: invalid and bad_request, which the server refused
//     and will refuse again until something changes — and that change is
//     an event): logged once with the request's namespace and name, failure
//     history forgotten, not retried. 403 and 404 are retried by default
//     (RBAC being granted, a quota freed, a namespace or dependent not yet
//     cached all pass); add ClassForbidden or ClassNotFound to NotRetried
//     to give up on them;
//   - past Options.MaxRetries (when positive) failed retries of the same
//     request: dropped (history forgotten), logged, counted in
//     controller_runtime_reconcile_retries_exhausted_total, and, when the
//     controller knows the kind of its requests' objects
//     (Options.ObjectKind, set by the builder to its For kind) and has a
//     Recorder, a Warning event with reason MaxRetriesExceeded on the
//     object. The next event or resync of the object starts it afresh;
//   - conflict: counted as a failure in the rate limiter and re-added at
//     once, without delay; once a Request has MaxImmediateConflictRetries
//     failures on record, conflicts back off like other errors;
//   - any other error: retried after the rate limiter's backoff
//     (AddRateLimited);
//   - Result.RequeueAfter: history forgotten, re-added after the duration;
//   - Result.Requeue: re-added after the backoff;
//   - otherwise: history forgotten.
//
// # Metrics
//
// With Options.Metrics (one NewMetrics per registry, shared by every
// controller) a controller exports controller-runtime's series:
// controller_runtime_reconcile_total{controller,result},
// controller_runtime_reconcile_errors_total{controller,class} (class: the
// values above; controller-runtime has only the controller label, so sum
// by controller for its dashboards),
// controller_runtime_terminal_reconcile_errors_total (every error not
// retried: terminal and the NotRetried classes),
// controller_runtime_reconcile_retries_exhausted_total (setpoint's: requests
// dropped by MaxRetries),
// controller_runtime_reconcile_panics_total,
// controller_runtime_reconcile_time_seconds,
// controller_runtime_max_concurrent_reconciles and
// controller_runtime_active_workers. With Options.QueueMetrics its queue,
// named after the controller, exports workqueue_*.
package controller
