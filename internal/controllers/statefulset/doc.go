// Package statefulset is the StatefulSet controller: for every apps/v1
// StatefulSet it keeps pods with stable identities <set>-<ordinal>
// (ordinals spec.ordinals.start .. start+replicas-1), their PVCs from
// spec.volumeClaimTemplates, and a history of ControllerRevisions, and
// reports what it sees in the set's status. It follows Kubernetes v1.37's
// controller (pkg/controller/statefulset) with its default feature gates
// (MaxUnavailableStatefulSet on; StatefulSetRecreateStrategy, alpha, off:
// the Recreate strategy is not implemented).
//
// # Calling protocol
//
//	err := statefulset.Add(mgr, statefulset.Options{})
//
// Add registers one controller runnable (it runs while the manager leads)
// fed by the manager's shared StatefulSet, pod, PVC and ControllerRevision
// informers. kube-controller-manager names it "statefulset-controller".
//
// # The contract with pods, PVCs and clients
//
//   - Pod <set>-<i>: the template's labels, annotations, finalizers and
//     spec; labels statefulset.kubernetes.io/pod-name=<pod>,
//     apps.kubernetes.io/pod-index=<i>, controller-revision-hash=<revision
//     name>; spec.hostname=<pod>, spec.subdomain=spec.serviceName; a volume
//     per claim template, named as the template, using PVC
//     <template>-<set>-<i>; the set as controller ownerReference.
//   - PVC <template>-<set>-<i>: the template with the selector's matchLabels
//     added; created before its pod and never deleted by this controller.
//     The retention policy is expressed in its ownerReferences and carried
//     out by the garbage collector: WhenDeleted=Delete makes the set its
//     controller; WhenScaled=Delete makes a scaled-down pod its controller.
//     Binding is the volume controller's business.
//   - A pod is ready when Running with Ready=True, available when ready for
//     minReadySeconds (by the injected clock).
//   - Revisions (package history): <set>-<hash>, data
//     {"spec":{"template":{...,"$patch":"replace"}}}, the template's labels
//     and the set's annotations, so `kubectl rollout history` and `kubectl
//     rollout undo` work; a template equal to an older revision's renumbers
//     that revision (a rollback) instead of creating one.
//
// # What one sync does (key namespace/name)
//
//  1. Skip (requeue in 1 s) while a pod or PVC this controller created or
//     deleted, or its own last status write, is not yet in the cache
//     (metric statefulset_controller_stale_sync_skips_total): acting on such
//     a cache could count a deleted pod as ready, or recreate a pod twice.
//  2. Adopt orphan revisions and claim pods (package controllerref): only
//     pods whose names make them members of the set are adopted.
//  3. Find or create the update revision; the current revision is
//     status.currentRevision's (or the update one).
//  4. Unless the set is being deleted: for each wanted ordinal in order,
//     delete a Failed/Succeeded pod (a later sync recreates it), create a
//     missing pod (its PVCs first), create missing PVCs of a Pending pod,
//     fix identity and storage. OrderedReady stops at the first pod it
//     created or that is not Running+Ready+available (halting on an
//     unhealthy pod); Parallel runs all in slow-start batches. Then the
//     condemned pods (ordinal out of range): their PVC owners, then
//     deletion, highest ordinal first and one at a time under OrderedReady.
//  5. RollingUpdate: delete old-revision pods from the highest ordinal down
//     to the partition while at most maxUnavailable (default 1) of the
//     wanted pods are unavailable; under Parallel, old pods already
//     unavailable first. OnDelete: nothing; pods take the update revision
//     when something else deletes them.
//  6. Status (replicas, readyReplicas, availableReplicas, currentReplicas,
//     updatedReplicas, currentRevision, updateRevision, collisionCount,
//     observedGeneration), written when changed; a rollout completes (the
//     update revision becomes current) when every wanted pod is updated and
//     ready. Then revisions beyond revisionHistoryLimit that no pod uses
//     are deleted, oldest first.
//  7. Requeue for the moment the next ready pod becomes available.
//
// # Invariants
//
//   - Never two pods of one ordinal: pod names are the ordinals, a pod is
//     created only when the cache shows none of that name and has caught up
//     with this controller's own writes.
//   - OrderedReady: ordinal i+1 is created only after ordinals start..i are
//     Running, Ready and available; scale-down removes the highest first.
//   - Objects from the cache are never modified.
//   - Events from component "statefulset-controller", worded as Kubernetes:
//     SuccessfulCreate "Create Pod web-0 in StatefulSet web successful",
//     FailedCreate, SuccessfulDelete, FailedDelete, SuccessfulUpdate,
//     FailedUpdate, claim creation ("Create Claim www-web-0 Pod web-0 in
//     StatefulSet web success"), ConflictingController.
//   - Metrics: statefulset_controller_statefulset_max_unavailable and
//     statefulset_controller_statefulset_unavailable_replicas (labels
//     statefulset_namespace, statefulset_name, pod_management_policy),
//     statefulset_controller_stale_sync_skips_total (group, resource).
package statefulset
