// Package objects is the typed layer between the HTTP handlers and the
// revisioned key-value store: for one resource it encodes objects into
// storage values and back, and applies the generic write rules every
// Kubernetes resource shares.
//
// What it owns:
//   - The storage format: protobuf (Kubernetes' storage envelope) with
//     metadata.resourceVersion cleared; on the way out resourceVersion is set
//     from the key's ModRevision (for a deletion, from the deletion's
//     revision).
//   - System metadata: uid, creationTimestamp, generation (1 on create, +1
//     whenever anything but metadata and status changes), generateName,
//     deletionTimestamp and deletionGracePeriodSeconds.
//   - The write pipeline: strategy PrepareForCreate/PrepareForUpdate, then
//     Default, then Validate; an update that changes nothing is not written
//     (no revision, no watch event); dry runs run the whole pipeline and
//     skip the write.
//   - Deletion: preconditions (uid, resourceVersion), propagationPolicy
//     recorded as the foregroundDeletion / orphan finalizers for the garbage
//     collector (orphan by default for kinds that say so), graceful deletion
//     for kinds that support it, and removal of the object once its last
//     finalizer is gone. An object of a kind without graceful deletion that
//     nothing holds is removed as it is, without being marked deleting.
//   - The answers kube-apiserver gives: repeated field errors reported
//     once; the kind's warnings on a valid write (registry.AddWarning).
//
// Errors are *apierrors.StatusError values ready to be sent to the client
// (NotFound, AlreadyExists, Conflict, Invalid, Gone, ...).
//
// A Store is safe for concurrent use. Objects it returns are new copies
// owned by the caller.
package objects
