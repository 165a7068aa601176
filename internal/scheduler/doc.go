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
//     memory, pods and every other resource (ephemeral-storage, extended
//     resources such as nvidia.com/gpu, hugepages-*), the sums of the
//     requests of the pods placed there, their host ports, the pods
//     themselves (for affinity, spreading and preemption) and counts per
//     controller owner and of pods with pod (anti-)affinity. A pod is
//     placed by the informer (bound pods, whoever bound them, pods created
//     with spec.nodeName included: those are never scheduled) or assumed
//     by the decision loop before its binding is written; the informer
//     showing the pod bound confirms the assumption, a failed binding
//     forgets it, a deleted or finished (Succeeded/Failed) pod releases
//     its place.
//   - The queue (schedulingQueue) has an active heap (priority, then
//     FIFO), a backoff heap (1s doubling to 10s per attempt) and an
//     unschedulable set. A pod with schedulingGates never enters it (the
//     API server gives it PodScheduled=False, reason SchedulingGated); it
//     does once its gates are removed. A node added, or updated in what
//     the filters read, a pod newly shown bound, deleted or finished, a
//     namespace's labels, a claim, volume or storage class changing, and a
//     forgotten assumption move the unschedulable pods out (to backoff
//     while their backoff lasts); so does UnschedulableFlushPeriod
//     passing. A pod that failed while such a change happened during its
//     attempt backs off instead of waiting.
//   - The decision loop, one goroutine: pop a pod, precompute what its
//     filters need (the cycle: volume claims, spreading counts, affinity
//     counts — only for pods that have such rules, or when placed pods'
//     anti-affinity may refuse it), filter every node, score those that
//     fit, assume the pod on the best, hand the binding to a goroutine (at
//     most BindConcurrency writes in flight), go on. A pod that fits
//     nowhere is offered to preemption.
//
// # Filters
//
// In kube-scheduler's order, the first refusal of a node wins, worded as
// kube-scheduler's plugins word it: NodeUnschedulable, TaintToleration
// (a node whose Ready condition is not True carries the NoSchedule taint
// node.kubernetes.io/not-ready or unreachable, as the node lifecycle
// would put it), NodeAffinity (nodeSelector and required node affinity,
// matchFields metadata.name included), NodePorts, NodeResourcesFit (pod
// count, cpu, memory and every other resource requested: "Insufficient
// nvidia.com/gpu"), VolumeBinding, PodTopologySpread (DoNotSchedule
// constraints: maxSkew over the domains of the nodes that have every
// constraint's key and pass nodeAffinityPolicy/nodeTaintsPolicy,
// minDomains, matchLabelKeys), InterPodAffinity (the pod's required
// affinity, with the first pod of a group with affinity to itself let
// through, its required anti-affinity, and placed pods' required
// anti-affinity against it; namespaces, namespaceSelector,
// matchLabelKeys and mismatchLabelKeys). Pods nominated to a node by a
// preemption, of no lower priority, are counted there. A pod's request
// is Kubernetes': the larger of the sum of its containers (with sidecars)
// and its largest init container, plus overhead.
//
// Volume binding refuses a pod before any node when a claim is missing,
// lost or being deleted, or unbound with an Immediate (or missing) class.
// A bound claim's volume must admit the node by its node affinity. An
// unbound WaitForFirstConsumer claim needs, on the node, a matching
// Available volume (the smallest) or a class that provisions there
// (allowedTopologies); once the node is chosen, the binding pre-binds the
// chosen volumes (claimRef) and annotates claims to provision with
// volume.kubernetes.io/selected-node, then waits until every claim of the
// pod is bound (volumeName and pv.kubernetes.io/bind-completed) before it
// binds the pod. The PV controller and provisioner do the rest.
//
// The message of a pod that fits nowhere is kube-scheduler's: "0/3 nodes
// are available: 1 Insufficient cpu, 2 node(s) didn't match pod
// anti-affinity rules." (counts per reason, sorted as strings), or the
// reason that refused the pod before any node, then the outcome of
// preemption: "preemption: 0/3 nodes are available: 1 No preemption
// victims found for incoming pod, 2 Preemption is not helpful for
// scheduling." or "preemption: not eligible due to
// preemptionPolicy=Never.". It is the FailedScheduling event and the
// PodScheduled=False condition (reason Unschedulable).
//
// # Preemption
//
// Priority comes from spec.priority, which the API server's Priority
// admission resolves from priorityClassName (or the globalDefault class).
// A pod that fits nowhere, unless its preemptionPolicy is Never or a
// victim of its earlier preemption is still terminating, is tried on each
// node refused for a reason preemption can resolve (not for taints,
// selectors, volumes, missing topology labels, affinity, nor a request
// larger than allocatable): remove the pods of lower priority, check the
// pod fits, give back as many as possible (highest priority first, those
// whose eviction would exceed a PodDisruptionBudget first). The node is
// kube-scheduler's choice: fewest budget violations, lowest highest victim
// priority, lowest priority sum, fewest victims, latest start. The pod
// gets status.nominatedNodeName; each victim the DisruptionTarget
// condition (reason PreemptionByScheduler), a Preempted event, and a
// deletion with its own grace period.
//
// # Scores
//
// Weighted as kube-scheduler's default profile: least allocated CPU and
// memory (1), PodTopologySpread (2: the pod's ScheduleAnyway
// constraints, or for a pod without constraints that has a controller the
// system defaults, hostname maxSkew 3 and zone maxSkew 5, with the pods
// of the same controller as the matching pods), preferred node affinity
// (2), PreferNoSchedule taints (3), InterPodAffinity (2: preferred terms
// both ways and placed pods' required affinity). Equal scores are broken
// at random, so identical nodes receive a ReplicaSet's pods evenly.
//
// # Invariants
//
//   - The cache's aggregates of a node equal the sums over the pods placed
//     on it, assumed ones included: a decision never counts a node's
//     capacity twice, so a burst of decisions does not overcommit.
//   - A pod is in the queue at most once, and is popped by one decision at
//     a time; while its binding is in flight it stays known to the queue
//     (in flight) and is not popped again.
//   - The cache mutex is never held across an API call. A pod without
//     spreading constraints or pod affinity, when no placed pod has pod
//     affinity, costs O(nodes): never a scan of all pods.
//
// # Differences from kube-scheduler
//
// The default spreading counts the pods of the same controller, not the
// pods matching the selectors of the Services, ReplicationControllers,
// ReplicaSets and StatefulSets that select the pod (a pod without a
// controller is not spread by default). No NodeResourcesBalancedAllocation
// or ImageLocality score, no VolumeRestrictions, NodeVolumeLimits or
// VolumeZone filters, no CSIStorageCapacity, no dynamic resource
// allocation; preemption does not clear the nominations of lower-priority
// pods on the chosen node and runs on every potential node (no sampling);
// no extenders or profiles, no percentage of nodes to score; assumed pods
// never expire; metrics are not exported.
package scheduler
