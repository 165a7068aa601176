// Package namespace is the namespace controller: it empties namespaces
// being deleted and then lets the API server delete them. It is modelled
// on Kubernetes' pkg/controller/namespace (namespaced_resources_deleter.go).
//
// # Protocol with the API server
//
// The API server creates every namespace with the "kubernetes" finalizer
// in spec.finalizers. A DELETE sets the deletionTimestamp and the phase
// Terminating, and the namespace stays while spec.finalizers is not
// empty. This controller removes "kubernetes" through the
// namespaces/finalize subresource (a PUT) once the namespace holds nothing;
// the API server then deletes it (metadata.finalizers, such as the garbage
// collector's, still apply).
//
// # What it promises
//
// For each namespace with a deletionTimestamp that still lists
// "kubernetes" (read live, never from the cache), a pass:
//
//  1. discovers the namespaced resources that support delete, in their
//     group's preferred version;
//  2. deletes the objects of each resource with background propagation:
//     deletecollection when the resource supports it, else list and delete
//     one by one; then lists what is left;
//  3. sets all five deletion conditions on the namespace status, with
//     Kubernetes' types, reasons and messages (True with details on
//     failure or leftovers, False otherwise), keeping the transition time
//     of those that did not change: NamespaceDeletionDiscoveryFailure,
//     NamespaceDeletionGroupVersionParsingFailure,
//     NamespaceDeletionContentFailure, NamespaceContentRemaining,
//     NamespaceFinalizersRemaining;
//  4. if nothing is left, finalizes the namespace. Otherwise it looks again
//     after half the estimated time plus a second: pods still terminating
//     are expected to take their remaining grace period, objects held by
//     finalizers Options.FinalizerEstimate (15 s). Leftovers with neither
//     are an error, retried with per-item exponential backoff (5 ms to
//     60 s, and 10/s overall), as are failed deletions and discovery
//     failures.
//
// Pods bound to a node are deleted gracefully and disappear only when the
// node agent confirms; unbound pods go at once.
//
// # Calling protocol
//
// Add registers the controller (Workers, default 10, namespaces at a time)
// on a manager; it runs while the manager leads and watches namespaces
// through the manager's shared informer.
package namespace
