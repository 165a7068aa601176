// Package nodelifecycle is the node lifecycle controller together with the
// taint-based eviction controller, after Kubernetes'
// pkg/controller/nodelifecycle and pkg/controller/tainteviction: a node
// that stops heartbeating turns Unknown, is tainted, its pods are marked
// not ready and, after their toleration, deleted so that their owners
// replace them.
//
// # Node health (every NodeMonitorPeriod, 5s)
//
// For each node the controller remembers when it last saw the node's Lease
// renewTime (kube-node-lease/<node>) or its Ready condition's
// lastHeartbeatTime change, on its own clock, as Kubernetes does (so clock
// skew between kubelet and controller does not matter; a restarted
// controller gives every node a full grace period). When
// NodeMonitorGracePeriod (40s) passes without either changing, Ready,
// MemoryPressure, DiskPressure and PIDPressure become Unknown, reason
// NodeStatusUnknown, "Kubelet stopped posting node status." (a missing one
// is added with NodeStatusNeverUpdated), through the status subresource.
//
// # Taints
//
// A node whose Ready is False gets node.kubernetes.io/not-ready, one whose
// Ready is Unknown node.kubernetes.io/unreachable, each with effects
// NoSchedule and NoExecute (timeAdded set on NoExecute); a Ready node loses
// both. Other taints are never touched, and a node that has not posted a
// Ready condition yet is not tainted until it is marked Unknown.
//
// # Pods
//
// When a node's Ready turns from True to anything else, the event
// NodeNotReady is recorded on it and every pod on it whose Ready condition
// is True gets Ready=False (Kubernetes' MarkPodsNotReady; a warning event
// NodeNotReady on each pod). The pods of a node with NoExecute taints are
// deleted (event TaintManagerEviction, "Marking for deletion Pod ns/name")
// at once if a taint is not tolerated, otherwise when the tolerated time,
// counted from the taint's timeAdded, runs out; a toleration without
// tolerationSeconds tolerates forever. As in Kubernetes the tolerations are
// the pod's own: the API server's DefaultTolerationSeconds admission gives
// every pod not-ready and unreachable NoExecute tolerations of 300s unless
// it has its own (a pod created without them, with that plugin disabled,
// is evicted at once). Deleted pods of a dead node stay
// Terminating (no kubelet confirms); the ReplicaSet controller ignores
// them and creates replacements.
//
// # Protocol
//
// Add (or New) registers one runnable on the manager; it needs leader
// election, waits for the node, Lease and pod informers, then runs the
// monitor loop and Workers eviction workers until its context ends. All
// writes go through the API (status subresource for conditions, update for
// taints, delete with a uid precondition for evictions); a failed write is
// retried at the next monitor pass or with back-off.
//
// Not implemented: zone-based eviction rate limits and the
// partial/full-disruption modes (Kubernetes stops evicting when a whole
// zone is down), the nodeStartupGracePeriod for nodes that never posted
// (they get the ordinary grace period), the DisruptionTarget condition
// before an eviction, and taints for memory/disk/PID pressure or
// unschedulable nodes.
package nodelifecycle
