package scheduler

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// affinityState is InterPodAffinity's per-pod precomputation: how many
// placed pods in each topology domain match the pod's required affinity
// (all terms) and anti-affinity (each term), and the domains where a
// placed pod's required anti-affinity refuses the pod. Built only for a
// pod that has required terms, or when some placed pod has required
// anti-affinity; removePod and addPod keep it current during preemption's
// what-ifs.
type affinityState struct {
	pod      *corev1.Pod
	nsLabels labels.Set
	// nsOf returns the labels of a namespace.
	nsOf         func(string) labels.Set
	terms        podTerms
	affinity     pairCounts
	antiAffinity pairCounts
	existingAnti pairCounts
}

// newAffinityState scans the placed pods: all of them when the pod has
// required terms, else only the nodes holding pods with required
// anti-affinity. nil when there is nothing to check.
func newAffinityState(pod *corev1.Pod, c *schedCache, nsOf func(string) labels.Set) *affinityState {
	terms := termsOf(pod)
	own := len(terms.affinity) > 0 || len(terms.antiAffinity) > 0
	if !own && c.antiAffinityPods == 0 {
		return nil
	}
	st := &affinityState{pod: pod, nsLabels: nsOf(pod.Namespace), nsOf: nsOf, terms: terms,
		affinity: pairCounts{}, antiAffinity: pairCounts{}, existingAnti: pairCounts{}}
	for _, n := range c.nodes {
		if n.node == nil || (!own && n.antiAffinityPods == 0) {
			continue
		}
		for _, p := range n.pods {
			st.update(p, n.node, 1, own)
		}
	}
	return st
}

// update counts (delta 1) or uncounts (-1) placed pod p on node; own says
// whether the incoming pod's terms are to be matched.
func (st *affinityState) update(p *corev1.Pod, node *corev1.Node, delta int64, own bool) {
	if hasRequiredAntiAffinity(p) {
		for _, t := range requiredTerms(p, p.Spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) {
			if t.matches(st.pod, st.nsLabels) {
				st.existingAnti.add(node, t.topologyKey, delta)
			}
		}
	}
	if !own {
		return
	}
	pl := st.nsOf(p.Namespace)
	if matchesAll(st.terms.affinity, p, pl) {
		for i := range st.terms.affinity {
			st.affinity.add(node, st.terms.affinity[i].topologyKey, delta)
		}
	}
	for i := range st.terms.antiAffinity {
		if t := &st.terms.antiAffinity[i]; t.matches(p, pl) {
			st.antiAffinity.add(node, t.topologyKey, delta)
		}
	}
}

func (st *affinityState) own() bool {
	return len(st.terms.affinity) > 0 || len(st.terms.antiAffinity) > 0
}

// filter is InterPodAffinity's Filter: the reason the node is refused
// ("" when it is not) and whether preemption cannot help.
func (st *affinityState) filter(node *corev1.Node) (string, bool) {
	if !st.affinityOK(node) {
		return reasonPodAffinity, true
	}
	for i := range st.terms.antiAffinity {
		t := &st.terms.antiAffinity[i]
		if v, ok := node.Labels[t.topologyKey]; ok && st.antiAffinity[topologyPair{t.topologyKey, v}] > 0 {
			return reasonPodAntiAffinity, false
		}
	}
	if len(st.existingAnti) > 0 {
		for k, v := range node.Labels {
			if st.existingAnti[topologyPair{k, v}] > 0 {
				return reasonExistingAnti, false
			}
		}
	}
	return "", false
}

// affinityOK: the node has every term's topology key and each of its
// domains holds a pod matching all terms; or no pod anywhere matches them
// and the pod matches its own terms (the first pod of a group with
// affinity to itself).
func (st *affinityState) affinityOK(node *corev1.Node) bool {
	terms := st.terms.affinity
	if len(terms) == 0 {
		return true
	}
	exist := true
	for i := range terms {
		v, ok := node.Labels[terms[i].topologyKey]
		if !ok {
			return false
		}
		if st.affinity[topologyPair{terms[i].topologyKey, v}] <= 0 {
			exist = false
		}
	}
	if exist {
		return true
	}
	return len(st.affinity) == 0 && matchesAll(terms, st.pod, st.nsLabels)
}
