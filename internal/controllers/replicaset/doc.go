// Package replicaset is the ReplicaSet controller: it keeps, for every
// apps/v1 ReplicaSet, exactly spec.replicas active pods that match its
// selector and are controlled by it, and reports what it sees in the
// ReplicaSet's status. It follows Kubernetes' controller
// (pkg/controller/replicaset).
//
// # Calling protocol
//
//	err := replicaset.Add(mgr, replicaset.Options{})
//
// Add registers one controller runnable on the manager (it runs only while
// the manager leads) fed by the manager's shared ReplicaSet and pod
// informers. The pod informer gets the controllerref.ControllerUIDIndex.
//
// # Other kinds
//
// AddKind runs the same controller for another kind with ReplicaSet
// semantics (package replicationcontroller passes the v1
// ReplicationController): a Kind names the controller and its event
// source and builds an Owner, the kind's objects seen as ReplicaSets
// (read from the kind's own informer, converted on read), which also
// writes their status back, names the controller references of the pods
// and the objects Events refer to. The ReplicaSet's own Owner is the
// identity: its path reads and writes ReplicaSets as before.
//
// # What one sync does (key namespace/name)
//
//  1. Read the ReplicaSet from the cache; if gone, forget its
//     expectations.
//  2. Candidates = pods it controls + orphans in its namespace (index
//     lookups, never a namespace scan); keep the active ones (not
//     terminating, not Succeeded/Failed) and claim them (package
//     controllerref): adopt matching orphans, release controlled pods that
//     stopped matching.
//  3. Only when expectations are satisfied and the ReplicaSet is not being
//     deleted: create or delete the difference, at most BurstReplicas per
//     sync. Creates run in slow-start batches 1, 2, 4, ... (each batch in
//     parallel), stopping at the first batch with an error; deletions take
//     the pods ranked first by podutil.RankedPods, all in parallel.
//  4. Compute status (replicas, fullyLabeledReplicas, readyReplicas,
//     availableReplicas with minReadySeconds, observedGeneration, the
//     ReplicaFailure condition) and write it through the status
//     subresource only if it changed.
//  5. If some ready pods are not yet available, requeue for the moment
//     the first becomes available.
//
// # Invariants
//
//   - No over-creation from a lagging watch: before issuing N creates (or
//     deletes) the controller records the expectation; it issues no more
//     creates or deletes for that ReplicaSet until the pod informer has
//     shown every one of them (or the write failed, or 5 minutes passed).
//     Pod events lower expectations in the pod handler, before the sync
//     they trigger.
//   - Deletion expectations are tracked by pod key: a pod deleted by
//     someone else does not satisfy an expectation for a pod we deleted.
//   - Objects from the cache are never modified; status is written on a
//     deep copy.
//   - Events: SuccessfulCreate, SuccessfulDelete, FailedCreate,
//     FailedDelete from component "replicaset-controller".
package replicaset
