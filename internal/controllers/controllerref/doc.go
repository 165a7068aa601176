// Package controllerref decides which dependents an owning controller
// controls: it keeps the ones it already controls that still match its
// selector, adopts matching orphans, and releases controlled ones that no
// longer match. It is Kubernetes' ControllerRefManager (ClaimPods,
// ClaimReplicaSets) made generic over the dependent type, so a ReplicaSet
// claims pods and a Deployment claims ReplicaSets with the same code.
//
// # Calling protocol
//
// Per sync, build a Manager for the owner (as read from the cache), its
// selector, a PatchFunc that sends a strategic merge patch to one
// dependent, and a CanAdopt check (usually RecheckDeletionTimestamp around
// an uncached GET of the owner). Then pass every candidate dependent (from
// the cache) to Claim; it returns the ones the owner controls after the
// call. A Manager is for one sync: CanAdopt runs at most once per Manager.
//
// # Invariants
//
//   - An object controlled by another owner (a controller ownerReference
//     with a different UID) is never touched and never returned.
//   - Adoption happens only when the object matches, has no controller,
//     is not being deleted, is in the owner's namespace, the owner is not
//     being deleted, and CanAdopt succeeded. The adoption patch adds one
//     ownerReference with controller=true and blockOwnerDeletion=true.
//   - Release happens only for an object controlled by this owner that no
//     longer matches, and not while the owner is being deleted (the
//     garbage collector owns that case). The release patch deletes the
//     ownerReference by the owner's UID.
//   - Both patches carry the dependent's UID, so a patch that reaches a
//     different object recreated under the same name fails validation
//     (422) instead of changing it. A 404 or 422 answer to either patch
//     means the object is gone or replaced: it is skipped, not an error.
//   - Other errors do not stop the claim: every candidate is examined,
//     and the errors are returned together with the objects claimed so far.
package controllerref
