package nodeagent

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/setpoint-dev/setpoint/internal/nodematch"
)

// The kubelet's admission reasons and messages (its predicate admit
// handler, v1.37): a failed predicate reads "Predicate <name> failed:
// <the scheduler plugin's reason>", a missing resource "Node didn't have
// enough resource: …" with reason OutOf<resource>.
const (
	osLabelReason   = "PodOSSelectorNodeLabelDoesNotMatch"
	osLabelMessage  = "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label"
	osFieldReason   = "PodOSNotSupported"
	osFieldMessage  = "Failed to admit pod as the OS field doesn't match node OS"
	outOfPrefix     = "OutOf"
	affinityName    = "NodeAffinity"
	affinityDesc    = "node(s) didn't match Pod's node affinity/selector"
	nodeNameName    = "NodeName"
	nodeNameDesc    = "node(s) didn't match the requested node name"
	nodePortsName   = "NodePorts"
	nodePortsDesc   = "node(s) didn't have free ports for the requested pod ports"
	taintName       = "TaintToleration"
	taintDesc       = "node(s) had taints that the pod didn't tolerate"
	rejectedPrefix  = "Pod was rejected: "
	simulatedNodeOS = "linux"
)

// admissionCheck decides, as the kubelet's predicate admit handler, whether
// pod fits node beside others (the pods admitted there and still active).
// It returns "" when the pod fits, else the reason and message of the first
// failure in the kubelet's order: the OS label, the OS field, then the pod
// count, cpu, memory, ephemeral-storage and other resources, node
// affinity/selector, node name, host ports, untolerated NoExecute taints.
func admissionCheck(pod *corev1.Pod, node *corev1.Node, others []*corev1.Pod) (reason, message string) {
	if v, ok := pod.Labels[corev1.LabelOSStable]; ok && v != simulatedNodeOS {
		return osLabelReason, osLabelMessage
	}
	if pod.Spec.OS != nil && string(pod.Spec.OS.Name) != simulatedNodeOS {
		return osFieldReason, osFieldMessage
	}
	if r, m := resourceFailure(pod, node, others); r != "" {
		return r, m
	}
	predicate := func(name, desc string) (string, string) {
		return name, fmt.Sprintf("Predicate %s failed: %s", name, desc)
	}
	switch {
	case !nodematch.MatchesNodeSelector(&pod.Spec, node):
		return predicate(affinityName, affinityDesc)
	case pod.Spec.NodeName != "" && pod.Spec.NodeName != node.Name:
		return predicate(nodeNameName, nodeNameDesc)
	case portsTaken(nodematch.HostPorts(pod), others):
		return predicate(nodePortsName, nodePortsDesc)
	}
	for i := range node.Spec.Taints {
		t := &node.Spec.Taints[i]
		if t.Effect == corev1.TaintEffectNoExecute && !nodematch.Tolerates(pod.Spec.Tolerations, t) {
			return predicate(taintName, taintDesc)
		}
	}
	return "", ""
}

// resourceFailure checks the pod count, then each resource the pod
// requests, against the node's allocatable minus what others request.
// Requests of extended resources the node does not know are ignored, as
// the kubelet ignores them (cluster-level resources).
func resourceFailure(pod *corev1.Pod, node *corev1.Node, others []*corev1.Pod) (string, string) {
	alloc := node.Status.Allocatable
	short := func(name corev1.ResourceName, req, used, capacity int64) (string, string) {
		reason := outOfPrefix + string(name)
		return reason, fmt.Sprintf("Node didn't have enough resource: %s, requested: %d, used: %d, capacity: %d",
			name, req, used, capacity)
	}
	if capacity := alloc.Pods().Value(); int64(len(others))+1 > capacity {
		return short(corev1.ResourcePods, 1, int64(len(others)), capacity)
	}
	names := nodematch.RequestedResources(&pod.Spec, func(n corev1.ResourceName) bool { return n != corev1.ResourcePods })
	slices.SortFunc(names, func(a, b corev1.ResourceName) int { return resourceRank(a, b) })
	for _, name := range names {
		if _, known := alloc[name]; !known && isExtendedResource(name) {
			continue
		}
		req := nodematch.PodRequest(&pod.Spec, name)
		if req <= 0 {
			continue
		}
		var used int64
		for _, o := range others {
			used += nodematch.PodRequest(&o.Spec, name)
		}
		capacity := nodematch.Quantity(alloc, name)
		if req > capacity-used {
			return short(name, req, used, capacity)
		}
	}
	return "", ""
}

// resourceRank orders cpu, memory and ephemeral-storage first, as the
// kubelet checks them, then the others by name.
func resourceRank(a, b corev1.ResourceName) int {
	rank := func(n corev1.ResourceName) int {
		switch n {
		case corev1.ResourceCPU:
			return 0
		case corev1.ResourceMemory:
			return 1
		case corev1.ResourceEphemeralStorage:
			return 2
		}
		return 3
	}
	if ra, rb := rank(a), rank(b); ra != rb {
		return ra - rb
	}
	return strings.Compare(string(a), string(b))
}

// portsTaken reports whether a wanted host port is held by another pod:
// the same protocol and port on the same IP, or where either binds every
// IP.
func portsTaken(want []nodematch.HostPort, others []*corev1.Pod) bool {
	if len(want) == 0 {
		return false
	}
	for _, o := range others {
		for _, u := range nodematch.HostPorts(o) {
			for _, w := range want {
				if w.Conflicts(u) {
					return true
				}
			}
		}
	}
	return false
}
