package scheduler

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// hardPodAffinityWeight is what a placed pod's required affinity term
// matching the incoming pod adds to its domain (kube-scheduler's default).
const hardPodAffinityWeight = 1

// affinityScores is InterPodAffinity's score: per topology domain, the
// weights of the incoming pod's preferred terms matching the pods there
// (anti-affinity negative), and of the placed pods' terms matching the
// incoming pod. nil when no term is involved.
func affinityScores(pod *corev1.Pod, c *schedCache, nsOf func(string) labels.Set) map[topologyPair]int64 {
	terms := termsOf(pod)
	own := len(terms.preferredAffinity) > 0 || len(terms.preferredAntiAffinity) > 0
	if !own && c.affinityPods == 0 {
		return nil
	}
	nsLabels := nsOf(pod.Namespace)
	out := map[topologyPair]int64{}
	add := func(t *affinityTerm, node *corev1.Node, w int64) {
		if v, ok := node.Labels[t.topologyKey]; ok && w != 0 {
			out[topologyPair{t.topologyKey, v}] += w
		}
	}
	for _, n := range c.nodes {
		if n.node == nil || (!own && n.affinityPods == 0) {
			continue
		}
		for _, p := range n.pods {
			if own {
				pl := nsOf(p.Namespace)
				for i := range terms.preferredAffinity {
					if t := &terms.preferredAffinity[i]; t.matches(p, pl) {
						add(t, n.node, int64(t.weight))
					}
				}
				for i := range terms.preferredAntiAffinity {
					if t := &terms.preferredAntiAffinity[i]; t.matches(p, pl) {
						add(t, n.node, -int64(t.weight))
					}
				}
			}
			if !hasPodAffinity(p) {
				continue
			}
			pt := termsOf(p)
			for i := range pt.affinity {
				if t := &pt.affinity[i]; t.matches(pod, nsLabels) {
					add(t, n.node, hardPodAffinityWeight)
				}
			}
			for i := range pt.preferredAffinity {
				if t := &pt.preferredAffinity[i]; t.matches(pod, nsLabels) {
					add(t, n.node, int64(t.weight))
				}
			}
			for i := range pt.preferredAntiAffinity {
				if t := &pt.preferredAntiAffinity[i]; t.matches(pod, nsLabels) {
					add(t, n.node, -int64(t.weight))
				}
			}
		}
	}
	return out
}

// affinityRaw sums the scores of the node's domains.
func affinityRaw(scores map[topologyPair]int64, node *corev1.Node) int64 {
	var s int64
	for k, v := range node.Labels {
		s += scores[topologyPair{k, v}]
	}
	return s
}

// normalizeMinMax maps raw scores to 0..100 from their minimum to their
// maximum (all 0 when they are equal).
func normalizeMinMax(raw []int64) []float64 {
	out := make([]float64, len(raw))
	if len(raw) == 0 {
		return out
	}
	lo, hi := raw[0], raw[0]
	for _, r := range raw {
		lo, hi = min(lo, r), max(hi, r)
	}
	if hi == lo {
		return out
	}
	for i, r := range raw {
		out[i] = float64(100 * (r - lo) / (hi - lo))
	}
	return out
}

// normalizeMax maps raw scores to 0..100 by their maximum; reverse makes
// the highest raw score 0 (kube-scheduler's default normalization).
func normalizeMax(raw []int64, reverse bool) []float64 {
	out := make([]float64, len(raw))
	var hi int64
	for _, r := range raw {
		hi = max(hi, r)
	}
	for i, r := range raw {
		switch {
		case hi == 0 && reverse:
			out[i] = 100
		case hi == 0:
		case reverse:
			out[i] = float64(100 - 100*r/hi)
		default:
			out[i] = float64(100 * r / hi)
		}
	}
	return out
}
