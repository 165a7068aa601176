// Package manager runs a process's controllers: it owns the API client,
// the shared informers, the metrics registry, health endpoints, leader
// election and the event broadcaster, and it starts and stops them in an
// order that keeps the invariants below.
//
// # Calling protocol
//
//	mgr, err := manager.New(manager.Options{Config: cfg, LeaderElection: true, LeaderElectionID: "my-operator"})
//	err = builder.ControllerManagedBy(mgr).For(builder.Kind[*appsv1.Deployment]()).Complete(r)
//	err = mgr.Start(ctx) // blocks
//
// Add runnables (controllers and anything with Start(ctx) error) before
// Start. Informer[T] and InformerFor give the shared, tracked informer of
// a type; Resource[T, L] a typed accessor; MappingFor maps a Go type to
// its resource: the kind comes from the Scheme (NewScheme registers all of
// k8s.io/api) and the resource name and scope from discovery (read once
// per group version). WebhookServer gives the admission webhook server
// (package webhook), run on every replica once asked for.
//
// # Resync and client limits
//
// Every handler registered on the manager's informers (every controller
// watch) is replayed the informer's whole cache as updates every
// SyncPeriod (default DefaultSyncPeriod, 10 hours, as controller-runtime),
// each informer's period drawn once from SyncPeriod × [0.9, 1.1)
// (SyncPeriodJitter), so that an event lost on the way (a handler or
// predicate that dropped it, a bug) is corrected by a reconcile at the
// next resync: level-triggered. SyncPeriodByResource gives one resource
// its own period (0: never); a negative SyncPeriod turns resync off.
// Resyncs tick on Options.Clock. Predicates see resyncs as updates whose
// old and new objects are the same (GenerationChanged drops them).
//
// The manager's client and every ClientFor identity have their own token
// bucket of Options.QPS and Burst (default: Config's when set, else
// controller-runtime's DefaultQPS 20 and DefaultBurst 30; a negative QPS:
// no limit), and export client-go's rest_client_requests_total and
// rest_client_request_duration_seconds on /metrics.
//
// # Start
//
//  1. Listen on MetricsAddr (/metrics: Go and process collectors,
//     controller_runtime_*, workqueue_*, informer metrics, rest_client_*)
//     and HealthAddr
//     (/healthz, /readyz, /healthz/<check>, ?verbose; "informer-sync" is a
//     readiness check, the elector's health a liveness check).
//  2. Start every informer and wait up to CacheSyncTimeout for all of
//     them. On timeout Start fails with an error naming each unsynced
//     resource and why (its informer's last list error): "timed out waiting
//     for cache of apps/v1 deployments to sync: deployments.apps is
//     forbidden: ...". Informers run whether or not this manager leads, so
//     a standby's cache is warm when it takes over.
//  3. Start the runnables that do not need leader election; close Ready.
//  4. Without leader election, start the controllers at once. With it,
//     compete for the Lease LeaderElectionNamespace/LeaderElectionID
//     (15s lease, 10s renew deadline, 2s retry by default) and start the
//     controllers when elected (Elected is closed then).
//
// # Stop
//
// Start returns when ctx ends, when a runnable fails (that error), or when
// leadership is lost while ctx is live (ErrLeaderElectionLost; like
// controller-runtime, a manager does not compete again: exit the process
// and let it restart). On the way out, within GracefulShutdownTimeout:
// controllers stop and drain their in-flight reconciles, then the Lease is
// released (so a standby takes over at its next retry, not after the lease
// expires), then the other runnables stop, queued events are written, the
// informers stop; finally the HTTP servers close.
//
// # Invariants
//
//   - Controllers act only while this manager leads: OnStartedLeading is
//     called before they start and OnStoppedLeading after all returned,
//     and leaderelection guarantees the old leader's context is cancelled
//     LeaseDuration-RenewDeadline before anyone else may lead.
//   - A Manager starts once; Add after Start is refused.
package manager
