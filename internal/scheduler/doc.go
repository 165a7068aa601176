// Package scheduler owns the placement of pods on nodes: it binds every
// pending pod whose spec.schedulerName is "default-scheduler" (the API
// server's default) to a node that can run it, through the pods/binding
// subresource, as kube-scheduler does. The binding subresource sets the
// pod's PodScheduled condition to True; a pod that fits no node gets
// PodScheduled=False, reason Unschedulable, and a FailedScheduling event.
//
// # Calling protocol
//
//	err := scheduler.Add(mgr, scheduler.Options{}) // before mgr.Start
//
// Add registers handlers on the manager's shared pod and node informers
// and one runnable that needs leader election (the caller's manager elects
// with the id "kube-scheduler"). The runnable waits until the handlers have
// seen the initial lists, then runs the decision loop until its context
// ends, and returns once the API writes it started have finished.
//
// # Parts
//
//   - The cache (schedCache) holds per-node aggregates: allocatable CPU,
//     memory and pod count, the sums of the requests of the pods placed
//     there, and a count of pods per controller owner. A pod is placed by
//     the informer (bound pods, whoever bound them) or assumed by the
//     decision loop before its binding is written; the informer showing
//     the pod bound confirms the assumption, a failed binding forgets it,
//     a deleted or finished (Succeeded/Failed) pod releases its place.
//   - The queue (schedulingQueue) has an active heap (priority, then
//     FIFO), a backoff heap (1s doubling to 10s per attempt) and an
//     unschedulable set. A node added, or updated in what the filters
//     read (allocatable, labels, taints, unschedulable, Ready), a pod
//     deleted or finished, and a forgotten assumption move the
//     unschedulable pods out (to backoff while their backoff lasts); so
//     does UnschedulableFlushPeriod passing. A pod that failed while such
//     a change happened during its attempt backs off instead of waiting.
//   - The decision loop, one goroutine: pop a pod, filter every node,
//     score those that fit, assume the pod on the best, hand the binding
//     to a goroutine (at most BindConcurrency writes in flight), go on.
//
// # Filters and scores
//
// Filters, in kube-scheduler's order, first refusal wins: the node is
// unschedulable (unless the pod tolerates node.kubernetes.io/unschedulable);
// a NoSchedule or NoExecute taint is not tolerated, where a node whose
// Ready condition is not True carries the NoSchedule taint
// node.kubernetes.io/not-ready (False or missing) or
// node.kubernetes.io/unreachable (Unknown) as the node lifecycle would put
// it; nodeSelector or required node affinity does not match; the pod
// count, CPU or memory requested exceed allocatable (every insufficient
// resource is a reason). A pod's request is Kubernetes': the larger of the
// sum of its containers (with sidecars) and its largest init container,
// plus overhead.
//
// Score: least allocated CPU and memory (non-zero requests, 0 to 100) plus
// twice the spreading score (100 scaled down by the number of pods of the
// same controller already on the node); equal scores are broken at
// random, so identical nodes receive a ReplicaSet's pods evenly.
//
// # Invariants
//
//   - The cache's aggregates of a node equal the sums over the pods placed
//     on it, assumed ones included: a decision never counts a node's
//     capacity twice, so a burst of decisions does not overcommit.
//   - A pod is in the queue at most once, and is popped by one decision at
//     a time; while its binding is in flight it stays known to the queue
//     (in flight) and is not popped again.
//   - The cache mutex is never held across an API call; decisions cost
//     O(nodes), never a scan of all pods.
//
// # Differences from kube-scheduler
//
// No preemption, no pod (anti-)affinity or topology spread constraints, no
// volume or port filters, no preferred node affinity score, no extenders or
// profiles, no percentage of nodes to score; assumed pods never expire;
// metrics are not exported.
package scheduler
