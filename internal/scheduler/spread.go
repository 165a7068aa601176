package scheduler

import (
	"math"

	"github.com/setpoint-dev/setpoint/internal/nodematch"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// The reasons of PodTopologySpread, kube-scheduler's.
const (
	reasonSpread        = "node(s) didn't match pod topology spread constraints"
	reasonSpreadMissing = reasonSpread + " (missing required label)"
)

// spreadConstraint is a topology spread constraint ready to count pods:
// its selector with matchLabelKeys folded in, and its policies resolved
// (nodeAffinityPolicy Honor and nodeTaintsPolicy Ignore by default).
type spreadConstraint struct {
	maxSkew        int32
	minDomains     int32
	topologyKey    string
	selector       labels.Selector
	honorAffinity  bool
	honorTaints    bool
	selfMatchCount int
}

// spreadConstraints returns the pod's constraints with the given
// whenUnsatisfiable action.
func spreadConstraints(pod *corev1.Pod, action corev1.UnsatisfiableConstraintAction) []spreadConstraint {
	var out []spreadConstraint
	for i := range pod.Spec.TopologySpreadConstraints {
		c := &pod.Spec.TopologySpreadConstraints[i]
		if c.WhenUnsatisfiable != action {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(c.LabelSelector)
		if err != nil || c.LabelSelector == nil {
			sel = labels.Nothing()
		}
		sc := spreadConstraint{maxSkew: c.MaxSkew, topologyKey: c.TopologyKey,
			selector:      withLabelKeys(sel, pod.Labels, c.MatchLabelKeys, nil),
			honorAffinity: c.NodeAffinityPolicy == nil || *c.NodeAffinityPolicy == corev1.NodeInclusionPolicyHonor,
			honorTaints:   c.NodeTaintsPolicy != nil && *c.NodeTaintsPolicy == corev1.NodeInclusionPolicyHonor}
		if c.MinDomains != nil {
			sc.minDomains = *c.MinDomains
		}
		if sc.selector.Matches(labels.Set(pod.Labels)) {
			sc.selfMatchCount = 1
		}
		out = append(out, sc)
	}
	return out
}

// included applies the constraint's node inclusion policies.
func (c *spreadConstraint) included(pod *corev1.Pod, node *corev1.Node) bool {
	if c.honorAffinity && !nodematch.MatchesNodeSelector(&pod.Spec, node) {
		return false
	}
	if c.honorTaints {
		for i := range node.Spec.Taints {
			t := &node.Spec.Taints[i]
			if t.Effect != corev1.TaintEffectPreferNoSchedule && !nodematch.Tolerates(pod.Spec.Tolerations, t) {
				return false
			}
		}
	}
	return true
}

// countMatching counts the node's pods of namespace ns the selector
// matches, terminating ones left out.
func countMatching(n *nodeInfo, sel labels.Selector, ns string) int64 {
	if sel.Empty() {
		return 0
	}
	var k int64
	for _, p := range n.pods {
		if p.DeletionTimestamp == nil && p.Namespace == ns && sel.Matches(labels.Set(p.Labels)) {
			k++
		}
	}
	return k
}

func hasKeys(node *corev1.Node, cs []spreadConstraint) bool {
	for i := range cs {
		if _, ok := node.Labels[cs[i].topologyKey]; !ok {
			return false
		}
	}
	return true
}

// spreadState is PodTopologySpread's per-pod precomputation for the
// DoNotSchedule constraints: the matching pods per domain of each
// constraint, over the nodes that have every constraint's key and pass
// its inclusion policies.
type spreadState struct {
	pod         *corev1.Pod
	constraints []spreadConstraint
	counts      []map[string]int64
}

// newSpreadState is nil for a pod without DoNotSchedule constraints.
func newSpreadState(pod *corev1.Pod, c *schedCache) *spreadState {
	cs := spreadConstraints(pod, corev1.DoNotSchedule)
	if len(cs) == 0 {
		return nil
	}
	st := &spreadState{pod: pod, constraints: cs, counts: make([]map[string]int64, len(cs))}
	for i := range cs {
		st.counts[i] = map[string]int64{}
	}
	for _, n := range c.nodes {
		if n.node == nil || !hasKeys(n.node, cs) {
			continue
		}
		for i := range cs {
			if cs[i].included(pod, n.node) {
				st.counts[i][n.node.Labels[cs[i].topologyKey]] += countMatching(n, cs[i].selector, pod.Namespace)
			}
		}
	}
	return st
}

// update counts (delta 1) or uncounts (-1) placed pod p on node n.
func (st *spreadState) update(p *corev1.Pod, node *corev1.Node, delta int64) {
	if p.DeletionTimestamp != nil || p.Namespace != st.pod.Namespace || !hasKeys(node, st.constraints) {
		return
	}
	for i := range st.constraints {
		c := &st.constraints[i]
		if c.included(st.pod, node) && c.selector.Matches(labels.Set(p.Labels)) {
			st.counts[i][node.Labels[c.topologyKey]] += delta
		}
	}
}

// filter is PodTopologySpread's Filter: the reason the node is refused
// ("" when it is not) and whether preemption cannot help.
func (st *spreadState) filter(node *corev1.Node) (string, bool) {
	for i := range st.constraints {
		c := &st.constraints[i]
		v, ok := node.Labels[c.topologyKey]
		if !ok {
			return reasonSpreadMissing, true
		}
		minMatch := int64(math.MaxInt64)
		for _, k := range st.counts[i] {
			minMatch = min(minMatch, k)
		}
		if len(st.counts[i]) < int(c.minDomains) || len(st.counts[i]) == 0 {
			minMatch = 0
		}
		if st.counts[i][v]+int64(c.selfMatchCount)-minMatch > int64(c.maxSkew) {
			return reasonSpread, false
		}
	}
	return "", false
}
