package scheduler

import (
	"math/rand/v2"

	"github.com/setpoint-dev/setpoint/internal/nodematch"
	corev1 "k8s.io/api/core/v1"
)

// Score weights, kube-scheduler's default profile: TaintToleration 3,
// NodeAffinity 2, PodTopologySpread 2, InterPodAffinity 2,
// NodeResourcesFit 1.
const (
	taintWeight        = 3
	nodeAffinityWeight = 2
	spreadWeight       = 2
	podAffinityWeight  = 2
)

// selectNode runs the pod's precomputation, filters every known node and
// picks the best scored of those that fit, ties at random (reservoir
// sampling, as kube-scheduler's selectHost), so identical nodes receive
// pods evenly. It returns a fitError when no node fits. Called with the
// Scheduler's mutex held; it reuses s.feasible.
func (s *Scheduler) selectNode(pod *corev1.Pod, d *podDemand) (string, *cycle, *fitError) {
	cy := &cycle{pod: pod, d: d}
	if s.cache.knownNodes == 0 {
		return "", cy, &fitError{}
	}
	vs, msg := s.newVolumeState(pod)
	if msg != "" {
		return "", cy, &fitError{numNodes: s.cache.knownNodes, preFilter: msg}
	}
	cy.volumes = vs
	cy.spread = newSpreadState(pod, s.cache)
	cy.affinity = newAffinityState(pod, s.cache, s.nsLabels)
	feasible := s.feasible[:0]
	var fe *fitError
	for _, n := range s.cache.nodes {
		if n.node == nil {
			continue
		}
		rs, unresolvable := cy.filterNode(n)
		if rs == nil && len(s.nominated) > 0 {
			rs, unresolvable = s.filterWithNominated(cy, n)
		}
		if rs != nil {
			if fe == nil {
				fe = &fitError{numNodes: s.cache.knownNodes, reasons: map[string]int{}}
			}
			for _, r := range rs {
				fe.reasons[r]++
			}
			if !unresolvable {
				fe.potential = append(fe.potential, n)
			}
			continue
		}
		feasible = append(feasible, n)
	}
	s.feasible = feasible
	defer clear(s.feasible) // drop references until the next decision
	if len(feasible) == 0 {
		return "", cy, fe
	}
	if len(feasible) == 1 {
		return feasible[0].node.Name, cy, nil
	}
	scores := s.score(pod, d, feasible)
	best, bestScore, ties := 0, -1.0, 0
	for i, sc := range scores {
		switch {
		case sc > bestScore:
			best, bestScore, ties = i, sc, 1
		case sc == bestScore:
			ties++
			if rand.IntN(ties) == 0 {
				best = i
			}
		}
	}
	return feasible[best].node.Name, cy, nil
}

// score sums the weighted scores of the feasible nodes: least allocated,
// topology spreading, and, for pods that have them, preferred node
// affinity, PreferNoSchedule taints and inter-pod affinity.
func (s *Scheduler) score(pod *corev1.Pod, d *podDemand, feasible []*nodeInfo) []float64 {
	total := make([]float64, len(feasible))
	for i, n := range feasible {
		total[i] = leastAllocated(n, d)
	}
	addWeighted := func(w float64, norm []float64) {
		for i := range total {
			total[i] += w * norm[i]
		}
	}
	raw := make([]int64, len(feasible))
	if sc := newSpreadScorer(pod, d, s.cache, feasible); sc != nil {
		valid := make([]bool, len(feasible))
		for i, n := range feasible {
			raw[i], valid[i] = sc.raw(n)
		}
		addWeighted(spreadWeight, normalizeSpread(raw, valid))
	}
	if prefs := preferredNodeTerms(pod); len(prefs) > 0 {
		for i, n := range feasible {
			raw[i] = preferredNodeScore(prefs, n.node)
		}
		addWeighted(nodeAffinityWeight, normalizeMax(raw, false))
	}
	if hasPreferNoSchedule(feasible) {
		for i, n := range feasible {
			raw[i] = intolerablePreferNoSchedule(pod, n.node)
		}
		addWeighted(taintWeight, normalizeMax(raw, true))
	}
	if as := affinityScores(pod, s.cache, s.nsLabels); as != nil {
		for i, n := range feasible {
			raw[i] = affinityRaw(as, n.node)
		}
		addWeighted(podAffinityWeight, normalizeMinMax(raw))
	}
	return total
}

// leastAllocated is NodeResourcesFit's LeastAllocated score, 0 to 100: the
// mean over CPU and memory of the share of allocatable left free once the
// pod is placed, counting non-zero requests.
func leastAllocated(n *nodeInfo, d *podDemand) float64 {
	cpu := freeShare(n.nonZero.milliCPU+d.nonZero.milliCPU, n.allocatable.milliCPU)
	mem := freeShare(n.nonZero.memory+d.nonZero.memory, n.allocatable.memory)
	return (cpu + mem) / 2
}

func freeShare(requested, capacity int64) float64 {
	if capacity <= 0 || requested > capacity {
		return 0
	}
	return float64(capacity-requested) * 100 / float64(capacity)
}

func preferredNodeTerms(pod *corev1.Pod) []corev1.PreferredSchedulingTerm {
	a := pod.Spec.Affinity
	if a == nil || a.NodeAffinity == nil {
		return nil
	}
	return a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution
}

// preferredNodeScore sums the weights of the preferred node affinity
// terms the node matches.
func preferredNodeScore(prefs []corev1.PreferredSchedulingTerm, node *corev1.Node) int64 {
	var s int64
	for i := range prefs {
		if prefs[i].Weight != 0 && nodematch.MatchesTerm(&prefs[i].Preference, node) {
			s += int64(prefs[i].Weight)
		}
	}
	return s
}

func hasPreferNoSchedule(nodes []*nodeInfo) bool {
	for _, n := range nodes {
		for i := range n.node.Spec.Taints {
			if n.node.Spec.Taints[i].Effect == corev1.TaintEffectPreferNoSchedule {
				return true
			}
		}
	}
	return false
}

// intolerablePreferNoSchedule counts the node's PreferNoSchedule taints
// the pod does not tolerate (TaintToleration's score, fewer is better).
func intolerablePreferNoSchedule(pod *corev1.Pod, node *corev1.Node) int64 {
	var k int64
	for i := range node.Spec.Taints {
		t := &node.Spec.Taints[i]
		if t.Effect == corev1.TaintEffectPreferNoSchedule && !nodematch.Tolerates(pod.Spec.Tolerations, t) {
			k++
		}
	}
	return k
}
