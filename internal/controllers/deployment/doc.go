// Package deployment is the Deployment controller: it rolls a Deployment's
// pod template out through ReplicaSets named after the template's hash,
// RollingUpdate (within maxSurge and maxUnavailable) or Recreate, keeps a
// bounded revision history that rollbacks reuse, honours pause, reports
// progress against progressDeadlineSeconds, and writes the status fields
// kubectl rollout status reads. It follows Kubernetes'
// pkg/controller/deployment.
//
// # Calling protocol
//
//	err := deployment.Add(mgr, deployment.Options{})
//
// Add registers one controller runnable (it runs only while the manager
// leads) with Options.Workers workers (default 5) over the manager's shared
// Deployment, ReplicaSet and pod informers; the ReplicaSet and pod
// informers get controllerref.ControllerUIDIndex. A Deployment is queued
// when it changes, when a ReplicaSet it controls (or an orphan its selector
// matches) changes, when a pod of a Recreate Deployment is deleted, and
// when its progress deadline is due (a timer on Options.Clock).
//
// # One sync (key namespace/name)
//
//  1. Read the Deployment from the cache (a deep copy; gone: drop its
//     timer). An empty selector only gets observedGeneration.
//  2. Claim ReplicaSets (package controllerref): keep the controlled ones
//     that match, adopt matching orphans, release the rest.
//  3. Being deleted: status only. Paused or resumed: record it in the
//     Progressing condition (Unknown, DeploymentPaused / DeploymentResumed).
//  4. Paused, or spec.replicas differs from a ReplicaSet's
//     desired-replicas annotation (a scaling event): resize only —
//     proportionally across the active ReplicaSets during a rolling
//     update — and recompute status. No rollout progress.
//  5. Otherwise roll out. The new ReplicaSet is the oldest one whose
//     template equals the Deployment's (ignoring pod-template-hash); if
//     there is none it is created as <name>-<podutil.ComputeHash(template,
//     collisionCount)> with the hash in its labels, selector and template
//     labels. A name taken by a ReplicaSet that is not ours increments
//     status.collisionCount. The new ReplicaSet's revision annotation
//     becomes max(old revisions)+1 (a ReplicaSet made new again by a
//     rollback keeps its earlier numbers in revision-history) and is
//     copied to the Deployment.
//     RollingUpdate: grow the new ReplicaSet while the pods stay within
//     spec.replicas+maxSurge; else shrink old ones, their unavailable
//     replicas first, while spec.replicas-maxUnavailable stay available.
//     Recreate: scale every old ReplicaSet to 0; once none of their pods
//     runs, create or grow the new one to spec.replicas.
//  6. Once complete, delete the oldest old ReplicaSets (by revision)
//     beyond revisionHistoryLimit that have no replicas and no pods.
//  7. Write status through the status subresource when it changed:
//     observedGeneration, replicas, updatedReplicas, readyReplicas,
//     availableReplicas, unavailableReplicas, collisionCount, the
//     Available condition (MinimumReplicasAvailable / ...Unavailable) and
//     the Progressing condition (NewReplicaSetCreated, FoundNewReplicaSet,
//     ReplicaSetUpdated on progress, NewReplicaSetAvailable when complete,
//     ProgressDeadlineExceeded when lastUpdateTime+deadline passed without
//     progress); then schedule the next progress check.
//
// # Invariants
//
//   - Every ReplicaSet write is an update carrying the resourceVersion the
//     decision was made from: a decision taken on a stale cache fails with
//     a conflict and is retried from fresh data, never applied.
//   - Rolling updates count, per ReplicaSet, max(spec.replicas,
//     status.replicas) pods against maxSurge and min(spec.replicas,
//     status.availableReplicas) available pods against maxUnavailable, so
//     the bounds hold for the pods themselves while a ReplicaSet controller
//     is still catching up with a resize (Kubernetes counts spec.replicas
//     and status.availableReplicas alone).
//   - Recreate asks for new pods only when the old ReplicaSets report no
//     replicas and the pod cache holds no pod of theirs that is not
//     Succeeded or Failed.
//   - Cached objects are never modified. Events: ScalingReplicaSet
//     ("Scaled up replica set X from a to b"), ReplicaSetCreateError,
//     SelectingAll, from component "deployment-controller".
//
// # Not implemented
//
// The pre-apps/v1 rollbackTo field (and its annotation form): kubectl
// rollout undo patches the template, which this controller handles as a
// rollout to the matching old ReplicaSet.
package deployment
