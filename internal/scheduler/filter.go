package scheduler

import (
	"fmt"
	"sort"
	"strings"

	"github.com/setpoint-dev/setpoint/internal/nodematch"
	corev1 "k8s.io/api/core/v1"
)

// The reasons a node is refused, worded as kube-scheduler's plugins word
// them (NodeUnschedulable, NodeAffinity, NodeResourcesFit).
const (
	reasonUnschedulable = "node(s) were unschedulable"
	reasonAffinity      = "node(s) didn't match Pod's node affinity/selector"
	reasonTooManyPods   = "Too many pods"
	reasonCPU           = "Insufficient cpu"
	reasonMemory        = "Insufficient memory"
)

// taintReason is TaintToleration's reason for an untolerated taint.
func taintReason(t *corev1.Taint) string {
	return fmt.Sprintf("node(s) had untolerated taint {%s: %s}", t.Key, t.Value)
}

// readinessTaint is the NoSchedule taint Kubernetes' node lifecycle puts on
// a node whose Ready condition is False (not-ready) or Unknown
// (unreachable); a node that has not reported the condition yet counts as
// not ready, as a kubelet registers with that taint. nil for a Ready node.
func readinessTaint(node *corev1.Node) *corev1.Taint {
	key := corev1.TaintNodeNotReady
	for i := range node.Status.Conditions {
		c := &node.Status.Conditions[i]
		if c.Type != corev1.NodeReady {
			continue
		}
		switch c.Status {
		case corev1.ConditionTrue:
			return nil
		case corev1.ConditionFalse:
			key = corev1.TaintNodeNotReady
		default:
			key = corev1.TaintNodeUnreachable
		}
		break
	}
	return &corev1.Taint{Key: key, Effect: corev1.TaintEffectNoSchedule}
}

var unschedulableTaint = corev1.Taint{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule}

// cycle is what one scheduling attempt precomputes for its pod (kube's
// PreFilter state): nil parts have nothing to check.
type cycle struct {
	pod      *corev1.Pod
	d        *podDemand
	affinity *affinityState
	spread   *spreadState
	volumes  *volumeState
}

// filterNode runs the filters in kube-scheduler's order (NodeUnschedulable,
// TaintToleration, NodeAffinity, NodePorts, NodeResourcesFit,
// VolumeBinding, PodTopologySpread, InterPodAffinity) and returns the
// reasons of the first that refuses the node (nil when the pod fits) and
// whether the refusal is one preemption cannot resolve.
func (cy *cycle) filterNode(n *nodeInfo) ([]string, bool) {
	pod, node := cy.pod, n.node
	if node.Spec.Unschedulable && !nodematch.Tolerates(pod.Spec.Tolerations, &unschedulableTaint) {
		return []string{reasonUnschedulable}, true
	}
	if t := untoleratedTaint(pod.Spec.Tolerations, node, n.readiness); t != nil {
		return []string{taintReason(t)}, true
	}
	if !nodematch.MatchesNodeSelector(&pod.Spec, node) {
		return []string{reasonAffinity}, true
	}
	if len(cy.d.ports) > 0 && portsConflict(cy.d.ports, n.ports) {
		return []string{reasonPorts}, false
	}
	if rs, unresolvable := insufficient(cy.d, n); rs != nil {
		return rs, unresolvable
	}
	if cy.volumes != nil {
		if rs := cy.volumes.filter(node); rs != nil {
			return rs, true
		}
	}
	if cy.spread != nil {
		if r, unresolvable := cy.spread.filter(node); r != "" {
			return []string{r}, unresolvable
		}
	}
	if cy.affinity != nil {
		if r, unresolvable := cy.affinity.filter(node); r != "" {
			return []string{r}, unresolvable
		}
	}
	return nil, false
}

// untoleratedTaint returns the first NoSchedule or NoExecute taint of the
// node (its readiness taint last) that tols do not tolerate, or nil.
func untoleratedTaint(tols []corev1.Toleration, node *corev1.Node, readiness *corev1.Taint) *corev1.Taint {
	for i := range node.Spec.Taints {
		t := &node.Spec.Taints[i]
		if t.Effect == corev1.TaintEffectPreferNoSchedule {
			continue
		}
		if !nodematch.Tolerates(tols, t) {
			return t
		}
	}
	if readiness != nil && !nodematch.Tolerates(tols, readiness) {
		return readiness
	}
	return nil
}

// insufficient is NodeResourcesFit: the pod count, then CPU, memory and
// every other resource the pod requests against allocatable minus what
// the node's pods request. unresolvable is set when a request exceeds
// allocatable itself (no preemption can make room). A pod requesting
// nothing needs only a pod slot.
func insufficient(d *podDemand, n *nodeInfo) (out []string, unresolvable bool) {
	if n.podCount+1 > n.allocPods {
		out = append(out, reasonTooManyPods)
	}
	r := d.request
	if r.isZero() && len(d.scalar) == 0 {
		return out, false
	}
	free := n.allocatable.sub(n.requested)
	if r.milliCPU > 0 && r.milliCPU > free.milliCPU {
		out = append(out, reasonCPU)
		unresolvable = unresolvable || r.milliCPU > n.allocatable.milliCPU
	}
	if r.memory > 0 && r.memory > free.memory {
		out = append(out, reasonMemory)
		unresolvable = unresolvable || r.memory > n.allocatable.memory
	}
	for name, v := range d.scalar {
		if v > 0 && v > n.allocScalar[name]-n.requestedScalar[name] {
			out = append(out, "Insufficient "+string(name))
			unresolvable = unresolvable || v > n.allocScalar[name]
		}
	}
	return out, unresolvable
}

// fitError is the outcome of a pod that fits no node: how many nodes were
// considered and, per reason, how many nodes gave it; or the message of a
// check that refused the pod before any node was looked at (preFilter);
// and the outcome of preemption (postFilter).
type fitError struct {
	numNodes   int
	reasons    map[string]int
	preFilter  string
	postFilter string
	// potential are the nodes refused for reasons preemption may resolve.
	potential []*nodeInfo
}

// Error renders kube-scheduler's message: "0/3 nodes are available: 1
// node(s) had untolerated taint {node.kubernetes.io/not-ready: }, 2
// Insufficient cpu." with the "<count> <reason>" items sorted, then the
// outcome of preemption ("preemption: ...").
func (e *fitError) Error() string {
	if e.numNodes == 0 {
		return "no nodes available to schedule pods"
	}
	msg := fmt.Sprintf("0/%d nodes are available:", e.numNodes)
	if e.preFilter != "" {
		msg += " " + e.preFilter + "."
	} else if len(e.reasons) > 0 {
		msg += " " + reasonHistogram(e.reasons) + "."
	}
	if e.postFilter != "" {
		msg += " " + e.postFilter
	}
	return msg
}

// reasonHistogram renders "<count> <reason>" items, sorted as strings.
func reasonHistogram(reasons map[string]int) string {
	items := make([]string, 0, len(reasons))
	for r, n := range reasons {
		items = append(items, fmt.Sprintf("%d %s", n, r))
	}
	sort.Strings(items)
	return strings.Join(items, ", ")
}
