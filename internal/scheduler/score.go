package scheduler

import (
	"math/rand/v2"

	corev1 "k8s.io/api/core/v1"
)

// spreadWeight weighs spreading against least-allocated, as
// kube-scheduler weighs PodTopologySpread (2) against NodeResourcesFit (1).
const spreadWeight = 2

// selectNode filters every known node for the pod and picks the best
// scored of those that fit, ties at random (reservoir sampling, as
// kube-scheduler's selectHost), so identical nodes receive pods evenly. It
// returns a fitError when no node fits. Called with the Scheduler's mutex
// held; it reuses s.feasible.
func (s *Scheduler) selectNode(pod *corev1.Pod, d *podDemand) (string, *fitError) {
	feasible := s.feasible[:0]
	var reasons map[string]int
	for _, n := range s.cache.nodes {
		if n.node == nil {
			continue
		}
		if rs := fits(pod, d, n); rs != nil {
			if reasons == nil {
				reasons = map[string]int{}
			}
			for _, r := range rs {
				reasons[r]++
			}
			continue
		}
		feasible = append(feasible, n)
	}
	s.feasible = feasible
	if len(feasible) == 0 {
		return "", &fitError{numNodes: s.cache.knownNodes, reasons: reasons}
	}
	maxOwned := 0
	if d.owner != "" {
		for _, n := range feasible {
			maxOwned = max(maxOwned, n.byOwner[d.owner])
		}
	}
	var best *nodeInfo
	bestScore, ties := -1.0, 0
	for _, n := range feasible {
		score := leastAllocated(n, d) + spreadWeight*spreadScore(n, d, maxOwned)
		switch {
		case score > bestScore:
			best, bestScore, ties = n, score, 1
		case score == bestScore:
			ties++
			if rand.IntN(ties) == 0 {
				best = n
			}
		}
	}
	clear(s.feasible) // drop references until the next decision
	return best.node.Name, nil
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

// spreadScore, 0 to 100, favours the nodes with the fewest pods of the
// pod's controller (SelectorSpread's per-node score): 100 on nodes with
// none of them when some node has maxOwned, and for pods without a
// controller.
func spreadScore(n *nodeInfo, d *podDemand, maxOwned int) float64 {
	if d.owner == "" || maxOwned == 0 {
		return 100
	}
	return float64(maxOwned-n.byOwner[d.owner]) * 100 / float64(maxOwned)
}
