// Package statemachine is seed 004 §6.3's state-machine controller on
// setpoint's library: a custom resource, Database
// (databases.demo.setpoint.dev, Go types in api/v1, the CRD in crd.yaml),
// whose controller walks each object through
//
//	"" → Pending → Provisioning → Running
//	Running → Updating → Running               (spec changed)
//	Provisioning, Updating → Failed → Pending  (spec.failProvisioning; retried with backoff)
//	any phase → Terminating → gone             (deleted; a finalizer holds it for the teardown)
//
// provisioning, update and teardown being simulated external operations
// that take Options.ProvisionTime, UpdateTime and TeardownTime.
// cmd/statemachine runs it as a program.
//
// # What it promises
//
//   - One step per reconcile. Each transition is one write of the status
//     subresource (phase, message, phaseTransitionTime, the Ready
//     condition, retries, observedGeneration), then one log line ("phase
//     changed" with from/to) and one Event on the Database whose reason
//     names the transition (ReasonProvisioning, ReasonProvisioned, …).
//     A failed write records no event; the reconcile is retried.
//   - No sleeping. An operation in progress or a retry's backoff is
//     waited for with reconcile.Result{RequeueAfter: remaining}, computed
//     on the manager's clock (manager.Options.Clock) from
//     status.phaseTransitionTime, so a restarted controller resumes the wait
//     and a test with a fake clock steps time instead of waiting.
//   - Never early. Provisioning and Updating last at least their time,
//     Terminating at least TeardownTime, and retry n comes at least
//     RetryBaseDelay·2^(n-1) (capped at RetryMaxDelay) after the n-th
//     failure; status.retries counts the failures at the current spec.
//   - Spec changes win. observedGeneration is the generation the last
//     started operation worked on; a Running Database whose generation
//     moved on goes Updating; a Failed one goes back to Pending at once
//     with its retry count reset (fixing spec.failProvisioning recovers it
//     without waiting out the backoff).
//   - Deletion. The finalizer demo.setpoint.dev/teardown is added before
//     the first transition; a deleted Database goes Terminating from
//     whatever phase it was in and, TeardownTime later, loses the finalizer
//     (event TornDown) so the API server removes it.
//
// Every decision reads the Database from the API server, not the cache,
// so it is taken on the latest state; status writes carry the
// resourceVersion read, so a concurrent edit is a conflict, retried at
// once by the controller.
//
// # Calling protocol
//
//	scheme, _ := manager.NewScheme()
//	_ = v1.AddToScheme(scheme)
//	_ = statemachine.InstallCRD(ctx, client, time.Minute) // or kubectl apply -f crd.yaml
//	mgr, _ := manager.New(manager.Options{Config: cfg, Scheme: scheme})
//	_ = statemachine.Add(mgr, statemachine.Options{})
//	_ = mgr.Start(ctx)
//
// Add resolves Database through the scheme and discovery, so the CRD must
// be established when it is called.
package statemachine
