// Package podutil holds the pure functions that workload controllers apply
// to pods: readiness and availability, activeness, condition lookup and
// update, and the ranking that decides which pods a controller removes
// first when it scales down.
//
// # What it promises
//
//   - Every function is pure: it reads its arguments, never mutates a pod
//     it was handed (UpdatePodCondition mutates only the PodStatus the
//     caller passes, which must be the caller's own copy), keeps no state
//     and takes "now" as an argument, so callers inject their clock.
//   - IsPodActive(p) is false exactly for pods that will never run again
//     or are on their way out: phase Succeeded or Failed, or a
//     deletionTimestamp set. Controllers count only active pods.
//   - IsPodAvailable(p, minReadySeconds, now) is true when the pod is ready
//     and its Ready condition has been true for at least minReadySeconds
//     (minReadySeconds 0: ready is enough).
//   - Ranking: Less(a, b) in ActivePods / RankedPods is true when a should
//     be deleted before b. Sorting ascending therefore puts the best
//     deletion candidates first. The order is Kubernetes': unassigned
//     before assigned; Pending before Unknown before Running; not ready
//     before ready; lower pod-deletion-cost before higher (RankedPods);
//     more co-located siblings before fewer (RankedPods); ready for a
//     shorter time before longer; more restarts before fewer; newer before
//     older.
package podutil
