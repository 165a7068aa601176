// Package disruption is the disruption controller: it writes the status
// of PodDisruptionBudgets, which the eviction subresource
// (internal/registry/core) reads to allow or refuse an eviction, and it
// clears stale DisruptionTarget conditions of pods. It follows
// Kubernetes' pkg/controller/disruption.
//
// # Calling protocol
//
//	err := disruption.Add(mgr, disruption.Options{})
//
// Add registers two controllers (they run while the manager leads) over
// the manager's shared PodDisruptionBudget and pod informers: the budget
// controller, queued when a budget changes, when a pod its selector
// matches changes, every ResyncPeriod (30 s, as Kubernetes' budget
// informer resync) and when an evicted pod's deletion is due; and the
// stale-condition controller, queued by pods carrying DisruptionTarget.
//
// # The status of a budget
//
// The pods are those of its namespace its selector matches (an empty
// selector matches all, none none). Then, as Kubernetes:
//
//   - minAvailable as an integer: expectedPods is the number of pods,
//     desiredHealthy the integer;
//   - minAvailable as a percentage, or maxUnavailable: expectedPods is the
//     sum of the scales of the pods' controllers (each counted once: a
//     ReplicaSet owned by a Deployment counts the Deployment's replicas;
//     ReplicaSets, Deployments, ReplicationControllers, StatefulSets and
//     any resource serving the scale subresource, read through it), and
//     desiredHealthy is the percentage of it rounded up, or expectedPods
//     minus maxUnavailable (rounded up), at least 0. Pods without a
//     controller are left out, with a Warning event UnmanagedPods; a pod
//     whose controller has no scale is an error ("found no controllers for
//     pod …", or "<resource> does not implement the scale subresource").
//   - currentHealthy counts the pods that are Ready, not being deleted,
//     and not in disruptedPods (evicted less than 2 minutes ago);
//     disruptedPods keeps only such recent evictions of pods still there.
//   - disruptionsAllowed is currentHealthy - desiredHealthy, 0 when
//     negative or when expectedPods is 0; observedGeneration is the
//     budget's generation; the condition DisruptionAllowed is True with
//     reason SufficientPods when disruptions are allowed, else False with
//     InsufficientPods.
//
// A sync that fails (other than a conflict) writes the fail-safe status:
// disruptionsAllowed 0 and DisruptionAllowed False, reason SyncFailed,
// with the error as message. Events: NoPods ("No matching pods found"),
// CalculateExpectedPodCountFailed, UnmanagedPods, and NotDeleted on a pod
// evicted but not deleted in time.
//
// # Stale DisruptionTarget
//
// A pod whose DisruptionTarget condition is True (not set by the kubelet),
// which is neither being deleted nor finished 2 minutes after the
// condition's transition, gets the condition set to False.
package disruption
