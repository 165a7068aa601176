package scheduler

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Random nodes (zones, CPUs, GPUs) and a burst of random pods in five
// groups: g0 with required anti-affinity per host, g1 spread over zones
// with maxSkew 1, g2 plain, g3 with required affinity to g2 per zone, g4
// with anti-affinity per zone against its own group. Whatever gets
// placed, no node is over capacity and no required rule is broken.
func TestRandomPlacementsKeepRules(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed>>7))
	e := newEnv(t, Options{InitialBackoff: 50 * time.Millisecond, MaxBackoff: 200 * time.Millisecond})
	zones := []string{"a", "b", "c"}
	nodes := 3 + rng.IntN(3)
	alloc := map[string]corev1.ResourceList{}
	zoneOf := map[string]string{}
	for i := range nodes {
		n := zoneNode(fmt.Sprintf("n%d", i), zones[i%len(zones)])
		n.cpu = fmt.Sprint(1 + rng.IntN(4))
		n.extra = corev1.ResourceList{"nvidia.com/gpu": *resource.NewQuantity(int64(rng.IntN(3)), resource.DecimalSI)}
		e.addNode(n)
		alloc[n.name] = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(n.cpu), "nvidia.com/gpu": n.extra["nvidia.com/gpu"]}
		zoneOf[n.name] = n.labels[corev1.LabelTopologyZone]
	}
	const pods = 30
	for i := range pods {
		g := rng.IntN(5)
		app := fmt.Sprintf("g%d", g)
		opts := []podOpt{labeled("app", app), requests(fmt.Sprintf("%dm", 100+rng.IntN(12)*100), "")}
		if rng.IntN(4) == 0 {
			opts = append(opts, requesting("nvidia.com/gpu", "1"))
		}
		switch g {
		case 0:
			opts = append(opts, antiAffinityTo(term(corev1.LabelHostname, "g0")))
		case 1:
			opts = append(opts, spread(corev1.LabelTopologyZone, 1, "g1"))
		case 3:
			opts = append(opts, affinityTo(term(corev1.LabelTopologyZone, "g2")))
		case 4:
			opts = append(opts, antiAffinityTo(term(corev1.LabelTopologyZone, "g4")))
		}
		e.createPod(fmt.Sprintf("p%02d-%s", i, app), opts...)
	}
	var list []corev1.Pod
	e.eventually("every pod bound or unschedulable", func() string {
		l, err := e.pods.List(e.ctx, metav1.ListOptions{})
		if err != nil {
			return err.Error()
		}
		list = l.Items
		for i := range list {
			p := &list[i]
			if c := scheduledCondition(p); p.Spec.NodeName == "" && (c == nil || c.Reason != corev1.PodReasonUnschedulable) {
				return p.Name + " undecided"
			}
		}
		return ""
	})
	checkPlacements(t, list, alloc, zoneOf)
}

func checkPlacements(t *testing.T, list []corev1.Pod, alloc map[string]corev1.ResourceList, zoneOf map[string]string) {
	t.Helper()
	used := map[string]map[corev1.ResourceName]int64{}
	perHost := map[string]map[string]int{}
	perZone := map[string]map[string]int{}
	bound := 0
	for i := range list {
		p := &list[i]
		n := p.Spec.NodeName
		if n == "" {
			continue
		}
		bound++
		if used[n] == nil {
			used[n] = map[corev1.ResourceName]int64{}
		}
		r := p.Spec.Containers[0].Resources.Requests
		used[n][corev1.ResourceCPU] += r.Cpu().MilliValue()
		if q, ok := r["nvidia.com/gpu"]; ok {
			used[n]["nvidia.com/gpu"] += q.Value()
		}
		app := p.Labels["app"]
		if perHost[app] == nil {
			perHost[app], perZone[app] = map[string]int{}, map[string]int{}
		}
		perHost[app][n]++
		perZone[app][zoneOf[n]]++
	}
	t.Logf("%d of %d pods bound; per zone %v", bound, len(list), perZone)
	for n, u := range used {
		a := alloc[n]
		if u[corev1.ResourceCPU] > a.Cpu().MilliValue() {
			t.Errorf("node %s: %dm CPU requested of %dm", n, u[corev1.ResourceCPU], a.Cpu().MilliValue())
		}
		gpus := a["nvidia.com/gpu"]
		if u["nvidia.com/gpu"] > gpus.Value() {
			t.Errorf("node %s: %d GPUs requested of %d", n, u["nvidia.com/gpu"], gpus.Value())
		}
	}
	for n, k := range perHost["g0"] {
		if k > 1 {
			t.Errorf("%d g0 pods on %s despite anti-affinity", k, n)
		}
	}
	for z, k := range perZone["g4"] {
		if k > 1 {
			t.Errorf("%d g4 pods in zone %s despite anti-affinity", k, z)
		}
	}
	for z := range perZone["g3"] {
		if perZone["g2"][z] == 0 {
			t.Errorf("g3 pods in zone %s without a g2 pod", z)
		}
	}
	lo, hi := 1<<30, 0
	for _, z := range []string{"a", "b", "c"} {
		k := perZone["g1"][z]
		lo, hi = min(lo, k), max(hi, k)
	}
	if hi-lo > 1 {
		t.Errorf("g1 skew %d over zones: %v", hi-lo, perZone["g1"])
	}
}
