// Package controllerutil holds the helpers reconcilers use on every call:
// create-or-update with no-op detection, owner and controller references,
// finalizers, and status conditions that carry observedGeneration.
//
// # CreateOrUpdate
//
// CreateOrUpdate reads the object named by obj; when it is missing it runs
// mutate on obj and creates it, otherwise it copies the live object into
// obj, runs mutate, and updates only when mutate changed something
// (apimachinery's semantic equality, so 1000m equals 1). mutate must only
// set the fields the caller owns, in place, and must not change the name
// or namespace. obj holds the server's answer afterwards. An update
// carries the resourceVersion that was read, so a concurrent write is a
// conflict (apierrors.IsConflict), which controllers retry at once.
//
// # References
//
// SetControllerReference makes owner the controller of object (one
// ownerReference with controller=true and blockOwnerDeletion=true); it
// fails with *AlreadyOwnedError when another object already controls it.
// SetOwnerReference adds or updates a plain owner reference. Owner and
// object must be in the same namespace, or the owner cluster-scoped.
//
// # Finalizers and conditions
//
// AddFinalizer, RemoveFinalizer and ContainsFinalizer edit
// metadata.finalizers in place and report whether they changed it.
// SetCondition is meta.SetStatusCondition with ObservedGeneration taken
// from the object, so readers can tell whether a condition describes the
// current spec.
package controllerutil
