// Package podgc is the pod garbage collector, after Kubernetes'
// pkg/controller/podgc: it force-deletes (grace period 0) the pods nobody
// else will delete.
//
// # Every GCCheckPeriod (20 s), from the pod and node informers
//
//   - Terminated pods (phase neither Pending, Running nor Unknown) beyond
//     TerminatedPodThreshold (kube-controller-manager's
//     --terminated-pod-gc-threshold, 12500) are deleted, evicted pods
//     (Failed with reason Evicted) first, then the oldest by
//     creationTimestamp, names breaking ties.
//   - Terminating pods on a node that is not Ready and carries the
//     node.kubernetes.io/out-of-service taint are deleted.
//   - Orphaned pods, bound to a node that does not exist: the node name is
//     quarantined for QuarantineTime (40 s) so that a node the informer has
//     not shown yet is not mistaken for a deleted one; if the informer still
//     lacks it then and a GET of the node answers NotFound, its pods are
//     deleted after being marked Failed with the condition DisruptionTarget
//     (reason DeletionByPodGC, "PodGC: node no longer exists").
//   - Terminating pods that were never scheduled (no spec.nodeName) are
//     deleted.
//
// Before deleting a pod that has not finished, the collector sets its
// phase to Failed through the status subresource (a strategic merge patch
// with the pod's UID as precondition), as Kubernetes does, so that its
// owner (a Job) counts it as failed. The collector records no events.
//
// Metrics: pod_gc_collector_force_delete_pods_total and
// pod_gc_collector_force_delete_pod_errors_total, labelled namespace and
// reason (terminated, out-of-service, orphaned, unscheduled).
//
// # Protocol
//
// Add registers one runnable on the manager (leader only); it waits for
// the pod and node informers, then collects every GCCheckPeriod on
// Options.Clock until its context ends.
package podgc
