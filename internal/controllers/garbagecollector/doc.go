// Package garbagecollector deletes objects whose owners are gone, and
// carries out the foreground and orphan propagation policies that the API
// server records as the foregroundDeletion and orphan finalizers. It is
// modelled on Kubernetes' pkg/controller/garbagecollector.
//
// # What it owns
//
//   - Monitors: one informer per resource that discovery reports in its
//     group's preferred version with the list, watch and delete verbs,
//     except IgnoredResources (events, core and events.k8s.io, as in
//     Kubernetes). They list and watch metadata only
//     (PartialObjectMetadata, in protobuf, as Kubernetes' metadata
//     informers), cut down further to what the graph reads.
//     Discovery is read again every ResyncPeriod (30 s): resources added
//     later get an informer, resources no longer served lose theirs.
//   - The dependency graph: a node per uid with the object's owner
//     references and its dependents. An owner named by a reference but
//     not (yet) seen by an informer is a virtual node.
//   - The graph builder: one goroutine that applies informer events in
//     order (an unbounded FIFO, nothing merged) and queues work.
//   - Workers: DeleteWorkers (20) on the attemptToDelete queue and
//     OrphanWorkers (5) on the attemptToOrphan queue, both rate-limited
//     (per-item exponential backoff, 5 ms to 1000 s).
//
// # Decisions
//
// Every decision to delete or patch is taken on live reads from the API
// server, never on the graph alone: the graph only says which objects to
// look at. Reads and patches are metadata-only too (PartialObjectMetadata
// in protobuf). For an object in attemptToDelete the collector GETs it (a
// virtual node that is not found, or found with another uid, becomes a
// "virtual delete" event for the builder), then classifies each owner
// reference by a live GET of the owner: dangling (no object by that name
// in the dependent's namespace, or for cluster-scoped kinds in the
// cluster, or one with another uid), waiting (being deleted with
// foregroundDeletion) or solid. Then:
//
//   - some solid owner: the references to dangling and waiting owners are
//     removed (JSON merge patch conditional on the resourceVersion read);
//   - no solid owner, some waiting, and the object has dependents: it is
//     deleted with foreground propagation (if one of its dependents is
//     itself deleting dependents, its owner references first stop
//     blocking, to break cycles);
//   - otherwise it is deleted, with the propagation its own finalizers ask
//     for (orphan, foreground) or else background, on condition of its uid.
//
// An owner being deleted with foregroundDeletion loses that finalizer once
// no dependent in the graph references it with blockOwnerDeletion=true;
// until then its blocking dependents are queued for deletion. An owner
// being deleted with the orphan finalizer has the references to it removed
// from every dependent in the graph (16 patches in flight), then loses
// the finalizer.
//
// Owners verified absent are remembered in a 500-entry LRU so that the
// siblings of a dependent need not GET the same missing owner again.
//
// A cluster-scoped object whose reference names a namespaced kind cannot
// be resolved, as in Kubernetes: it is never collected for that reason,
// and an OwnerRefInvalidNamespace warning event is recorded. A namespaced
// object's reference always designates an owner in its own namespace (or
// a cluster-scoped one), so a reference to an owner living in another
// namespace is dangling.
//
// # Protocol
//
// Add registers a GarbageCollector on a manager (it runs while the manager
// leads). Start runs discovery and the informers, waits up to SyncTimeout
// for their initial lists, then starts the builder and the workers; it
// returns nil once ctx ended and every goroutine it started has stopped.
// A restarted collector rebuilds the graph from the initial lists, and
// the objects found being deleted with a propagation finalizer are
// processed as if the deletion had just been observed.
package garbagecollector
