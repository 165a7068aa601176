package scheduler

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

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
	if node.Spec.Unschedulable && !tolerated(pod.Spec.Tolerations, &unschedulableTaint) {
		return []string{reasonUnschedulable}, true
	}
	if t := untoleratedTaint(pod.Spec.Tolerations, node, n.readiness); t != nil {
		return []string{taintReason(t)}, true
	}
	if !matchesNodeSelector(pod, node) {
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
		if !tolerated(tols, t) {
			return t
		}
	}
	if readiness != nil && !tolerated(tols, readiness) {
		return readiness
	}
	return nil
}

// tolerated reports whether any toleration tolerates t: same effect (or
// none named), same key (or none named, which needs operator Exists), and
// for Equal (the default operator) the same value.
func tolerated(tols []corev1.Toleration, t *corev1.Taint) bool {
	for i := range tols {
		tol := &tols[i]
		if tol.Effect != "" && tol.Effect != t.Effect {
			continue
		}
		if tol.Key != "" && tol.Key != t.Key {
			continue
		}
		switch tol.Operator {
		case corev1.TolerationOpExists:
			return true
		case "", corev1.TolerationOpEqual:
			if tol.Value == t.Value {
				return true
			}
		}
	}
	return false
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

// matchesNodeSelector checks spec.nodeSelector (every label equal) and the
// required node affinity (any of the terms).
func matchesNodeSelector(pod *corev1.Pod, node *corev1.Node) bool {
	if len(pod.Spec.NodeSelector) == 0 && pod.Spec.Affinity == nil {
		return true
	}
	for k, v := range pod.Spec.NodeSelector {
		if got, ok := node.Labels[k]; !ok || got != v {
			return false
		}
	}
	a := pod.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return true
	}
	for i, terms := 0, a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms; i < len(terms); i++ {
		if matchesTerm(&terms[i], node) {
			return true
		}
	}
	return false
}

// matchesTerm ANDs a term's label expressions and field expressions (only
// metadata.name exists for nodes). An empty term matches nothing.
func matchesTerm(term *corev1.NodeSelectorTerm, node *corev1.Node) bool {
	if len(term.MatchExpressions) == 0 && len(term.MatchFields) == 0 {
		return false
	}
	for i := range term.MatchExpressions {
		r := &term.MatchExpressions[i]
		v, ok := node.Labels[r.Key]
		if !matchesRequirement(r, v, ok) {
			return false
		}
	}
	for i := range term.MatchFields {
		r := &term.MatchFields[i]
		if r.Key != "metadata.name" || (r.Operator != corev1.NodeSelectorOpIn && r.Operator != corev1.NodeSelectorOpNotIn) {
			return false
		}
		if !matchesRequirement(r, node.Name, true) {
			return false
		}
	}
	return true
}

// matchesRequirement applies one requirement to a label value v (present
// when ok). Gt and Lt compare integers and need exactly one value.
func matchesRequirement(r *corev1.NodeSelectorRequirement, v string, ok bool) bool {
	switch r.Operator {
	case corev1.NodeSelectorOpIn:
		return ok && contains(r.Values, v)
	case corev1.NodeSelectorOpNotIn:
		return !ok || !contains(r.Values, v)
	case corev1.NodeSelectorOpExists:
		return ok
	case corev1.NodeSelectorOpDoesNotExist:
		return !ok
	case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
		if !ok || len(r.Values) != 1 {
			return false
		}
		have, err1 := strconv.ParseInt(v, 10, 64)
		want, err2 := strconv.ParseInt(r.Values[0], 10, 64)
		if err1 != nil || err2 != nil {
			return false
		}
		if r.Operator == corev1.NodeSelectorOpGt {
			return have > want
		}
		return have < want
	}
	return false
}

func contains(vals []string, v string) bool {
	for _, x := range vals {
		if x == v {
			return true
		}
	}
	return false
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
