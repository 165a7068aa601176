package scheduler

import (
	"maps"

	corev1 "k8s.io/api/core/v1"
)

// clone copies the cycle's counts, for a what-if on one node.
func (cy *cycle) clone() *cycle {
	c := *cy
	if a := cy.affinity; a != nil {
		ca := *a
		ca.affinity, ca.antiAffinity, ca.existingAnti = maps.Clone(a.affinity), maps.Clone(a.antiAffinity), maps.Clone(a.existingAnti)
		c.affinity = &ca
	}
	if sp := cy.spread; sp != nil {
		cs := *sp
		cs.counts = make([]map[string]int64, len(sp.counts))
		for i := range sp.counts {
			cs.counts[i] = maps.Clone(sp.counts[i])
		}
		c.spread = &cs
	}
	return &c
}

// update counts (delta 1) or uncounts (-1) pod p placed on node in the
// cycle's precomputed counts (kube's PreFilter AddPod and RemovePod).
func (cy *cycle) update(p *corev1.Pod, node *corev1.Node, delta int64) {
	if cy.affinity != nil {
		cy.affinity.update(p, node, delta, cy.affinity.own())
	}
	if cy.spread != nil {
		cy.spread.update(p, node, delta)
	}
}

// filterWithNominated runs the filters once more with the pods nominated
// to the node that have at least the pod's priority counted there, as
// kube-scheduler does: the room a preemption made is kept for its pod.
// Called with the mutex held.
func (s *Scheduler) filterWithNominated(cy *cycle, n *nodeInfo) ([]string, bool) {
	var sim *nodeInfo
	var what *cycle
	prio := podPriority(cy.pod)
	for uid, nm := range s.nominated {
		if nm.node != n.node.Name || uid == cy.pod.UID || nm.priority < prio {
			continue
		}
		if _, placed := s.cache.pods[uid]; placed {
			continue
		}
		if sim == nil {
			sim, what = n.clone(), cy.clone()
		}
		sim.addPod(nm.pod, &nm.demand)
		what.update(nm.pod, n.node, 1)
	}
	if sim == nil {
		return nil, false
	}
	return what.filterNode(sim)
}
