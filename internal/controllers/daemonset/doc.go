// Package daemonset is the DaemonSet controller: for every apps/v1
// DaemonSet it keeps one daemon pod on each node that should run it, rolls
// out template changes, records ControllerRevisions and reports status. It
// follows Kubernetes' controller (pkg/controller/daemon) in every fact a
// client sees: labels, revisions, status counts, event reasons and
// messages.
//
// # Calling protocol
//
//	err := daemonset.Add(mgr, daemonset.Options{})
//
// Add registers one controller runnable (it runs only while the manager
// leads) fed by the manager's shared DaemonSet, pod, node and
// ControllerRevision informers.
//
// # Which nodes (nodeShouldRun)
//
// A node should run the daemon when the template's nodeName (if set) is the
// node, its nodeSelector and required node affinity match the node, and
// every NoSchedule and NoExecute taint is tolerated; a daemon pod may stay
// on a node whose only untolerated taints are NoSchedule. Every daemon pod
// carries, besides its template's, the tolerations Kubernetes adds:
// node.kubernetes.io/not-ready and unreachable (NoExecute, no
// tolerationSeconds), disk-pressure, memory-pressure, pid-pressure and
// unschedulable (NoSchedule), and network-unavailable (NoSchedule) for
// hostNetwork pods.
//
// # Placement
//
// The controller does not bind: as Kubernetes since 1.12, each pod gets the
// required node affinity "matchFields metadata.name In [node]" (replacing
// the template's required terms, keeping its preferred ones) and the
// default scheduler binds it. A pod is the node's by spec.nodeName once
// bound, by that affinity before.
//
// # What one sync does (key namespace/name)
//
//  1. A selector selecting everything: Warning SelectingAll, nothing else.
//     A DaemonSet being deleted: nothing (its revisions may be gone).
//  2. Revisions: adopt matching orphan ControllerRevisions; the current
//     template's revision is found by its data (a strategic merge patch
//     {"spec":{"template":{…,"$patch":"replace"}}}, which `kubectl rollout
//     undo` applies), created as "<ds>-<hash>" (hash of the pod template
//     and status.collisionCount, label controller-revision-hash, the
//     DaemonSet's annotations) with revision max(old)+1, or renumbered so.
//  3. If expectations are not satisfied: status counts only.
//  4. manage: claim pods (adopt orphans, release non-matching); per node,
//     create the missing pod, delete pods where they may not stay, delete
//     succeeded pods and failed pods (the latter paced per node by a
//     back-off of 1 s doubling to 15 min, with Warning FailedDaemonPod),
//     delete surplus pods (all but the oldest; when surging, one old and one
//     new may coexist); delete unbound pods targeting deleted nodes. At most
//     250 creates (slow-start batches 1, 2, 4, …) and 250 deletes per sync.
//  5. If nothing is outstanding and the strategy is RollingUpdate: without
//     maxSurge, delete old available pods while fewer than maxUnavailable
//     desired nodes lack an available updated pod (old unavailable pods are
//     replaced at once); with maxSurge, create a new pod beside an old one
//     on at most maxSurge nodes, and delete the old one once the new one is
//     available. Neither set: maxUnavailable 1. OnDelete: nothing; new
//     pods come only where old ones were deleted.
//  6. Delete the oldest old revisions no pod runs beyond
//     revisionHistoryLimit.
//  7. Status: desiredNumberScheduled, currentNumberScheduled,
//     numberMisscheduled, numberReady, numberAvailable (minReadySeconds on
//     the injected clock), numberUnavailable, updatedNumberScheduled
//     (pod-template-generation or controller-revision-hash current),
//     observedGeneration (only when the sync could act); written through
//     the status subresource when changed. While a ready pod is not yet
//     available, the DaemonSet is queued again for that moment.
//
// # Labels on every daemon pod
//
// controller-revision-hash (the current revision's hash) and
// pod-template-generation (the deprecated.daemonset.template.generation
// annotation the API server keeps).
//
// # Invariants
//
//   - No double pod from a lagging watch: creates and deletes are recorded
//     as expectations before they are issued (deletions by pod key); no
//     further creates or deletes, nor rolling-update steps, until all are
//     observed (or failed, or 5 minutes passed).
//   - A terminating pod still occupies its node: its replacement is created
//     once it is gone.
//   - Objects from the cache are never modified.
//   - Events from component "daemonset-controller": SuccessfulCreate
//     ("Created pod: <name>"), SuccessfulDelete ("Deleted pod: <name>"),
//     FailedCreate ("Error creating: …"), FailedDelete ("Error deleting:
//     …"), FailedDaemonPod ("Found failed daemon pod <ns>/<pod> on node
//     <node>, will try to kill it"), SucceededDaemonPod, SelectingAll.
//   - Node updates other than to labels and taints (heartbeats, status)
//     do not wake the controller; a node's addition wakes the DaemonSets
//     that want it, a label or taint change those whose verdict changed,
//     a deletion those that wanted the node or had pods there.
package daemonset
