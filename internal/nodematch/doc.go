// Package nodematch decides whether a pod may go to a node by the node's
// labels, name and taints, as Kubernetes' NodeAffinity and TaintToleration
// filters decide it. The scheduler, the DaemonSet controller (which asks
// "should this node run a daemon pod?") and the node lifecycle controller
// (which asks "does this pod tolerate the NoExecute taint?") share it, so
// that the three never disagree. What a pod requests of each resource
// (PodRequest, RequestedResources), the host ports it claims and when two
// claims conflict (HostPorts, HostPort.Conflicts) are shared the same way
// by the scheduler's filters and the simulated kubelet's admission.
//
// A pod matches a node when every spec.nodeSelector label is on the node
// with the same value, and, when the pod has required node affinity, at
// least one of its terms matches. A term ANDs its label expressions and its
// field expressions; an empty term matches nothing; the only node field is
// metadata.name, with In or NotIn. Gt and Lt compare integers and take
// exactly one value; a label that does not parse matches neither.
//
// Tolerations follow k8s.io/api's Toleration.ToleratesTaint with the
// comparison operators off (their feature gate is off by default in
// v1.37): an empty effect matches every effect, an empty key (operator
// Exists) every key, Exists any value, Equal (or no operator) the same
// value.
package nodematch
