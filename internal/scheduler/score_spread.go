package scheduler

import (
	"math"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Default constraints of PodTopologySpread (kube-scheduler's system
// defaults), applied to the scoring of pods that name no constraints and
// have a controller: hostname maxSkew 3 and zone maxSkew 5, ScheduleAnyway.
const (
	defaultHostnameSkew = 3
	defaultZoneSkew     = 5
)

// spreadScorer is PodTopologySpread's score: per node, the matching pods
// of each soft constraint's domain weighted by log(domains + 2), plus
// maxSkew - 1; fewer is better.
type spreadScorer struct {
	pod         *corev1.Pod
	constraints []spreadConstraint
	// owner is set for the default constraints: pods of the same
	// controller are the matching pods, read from the nodes' byOwner.
	owner   types.UID
	ignored map[string]bool
	counts  []map[string]int64
	weights []float64
}

// newSpreadScorer prepares the score over the feasible nodes; nil when the
// pod has no soft constraints and no controller.
func newSpreadScorer(pod *corev1.Pod, d *podDemand, c *schedCache, feasible []*nodeInfo) *spreadScorer {
	sc := &spreadScorer{pod: pod}
	requireAll := len(pod.Spec.TopologySpreadConstraints) > 0
	if requireAll {
		sc.constraints = spreadConstraints(pod, corev1.ScheduleAnyway)
	} else if d.owner != "" {
		sc.owner = d.owner
		sc.constraints = []spreadConstraint{
			{maxSkew: defaultHostnameSkew, topologyKey: corev1.LabelHostname, honorAffinity: true},
			{maxSkew: defaultZoneSkew, topologyKey: corev1.LabelTopologyZone, honorAffinity: true},
		}
	}
	if len(sc.constraints) == 0 {
		return nil
	}
	cs := sc.constraints
	sc.counts = make([]map[string]int64, len(cs))
	sizes := make([]int, len(cs))
	for i := range cs {
		sc.counts[i] = map[string]int64{}
	}
	for _, n := range feasible {
		if requireAll && !hasKeys(n.node, cs) {
			if sc.ignored == nil {
				sc.ignored = map[string]bool{}
			}
			sc.ignored[n.node.Name] = true
			continue
		}
		for i := range cs {
			v, ok := n.node.Labels[cs[i].topologyKey]
			if !ok || cs[i].topologyKey == corev1.LabelHostname {
				continue
			}
			if _, seen := sc.counts[i][v]; !seen {
				sc.counts[i][v] = 0
				sizes[i]++
			}
		}
	}
	sc.weights = make([]float64, len(cs))
	for i := range cs {
		size := sizes[i]
		if cs[i].topologyKey == corev1.LabelHostname {
			size = len(feasible) - len(sc.ignored)
		}
		sc.weights[i] = math.Log(float64(size + 2))
	}
	for i := range cs {
		if len(sc.counts[i]) > 0 {
			sc.countDomains(c)
			break
		}
	}
	return sc
}

// countDomains counts the matching pods of the domains (hostname aside)
// over every node that has the key and passes the inclusion policies.
func (sc *spreadScorer) countDomains(c *schedCache) {
	for _, n := range c.nodes {
		if n.node == nil {
			continue
		}
		for i := range sc.constraints {
			k := &sc.constraints[i]
			v, ok := n.node.Labels[k.topologyKey]
			if !ok || k.topologyKey == corev1.LabelHostname {
				continue
			}
			if _, counted := sc.counts[i][v]; !counted || !k.included(sc.pod, n.node) {
				continue
			}
			sc.counts[i][v] += sc.matching(n, k)
		}
	}
}

func (sc *spreadScorer) matching(n *nodeInfo, k *spreadConstraint) int64 {
	if sc.owner != "" {
		return int64(n.byOwner[sc.owner])
	}
	return countMatching(n, k.selector, sc.pod.Namespace)
}

// raw is the node's score before normalization; ok is false for an
// ignored node.
func (sc *spreadScorer) raw(n *nodeInfo) (int64, bool) {
	if sc.ignored[n.node.Name] {
		return 0, false
	}
	var score float64
	for i := range sc.constraints {
		k := &sc.constraints[i]
		v, ok := n.node.Labels[k.topologyKey]
		if !ok {
			continue
		}
		var cnt int64
		if k.topologyKey == corev1.LabelHostname {
			cnt = sc.matching(n, k)
		} else {
			cnt = sc.counts[i][v]
		}
		score += float64(cnt)*sc.weights[i] + float64(k.maxSkew-1)
	}
	return int64(math.Round(score)), true
}

// normalizeSpread turns raw scores (fewer pods is better) into 0..100.
func normalizeSpread(raw []int64, valid []bool) []float64 {
	minS, maxS := int64(math.MaxInt64), int64(0)
	for i, r := range raw {
		if valid[i] {
			minS, maxS = min(minS, r), max(maxS, r)
		}
	}
	out := make([]float64, len(raw))
	for i, r := range raw {
		switch {
		case !valid[i]:
		case maxS == 0:
			out[i] = 100
		default:
			out[i] = float64(100 * (maxS + minS - r) / maxS)
		}
	}
	return out
}
