package podautoscaler_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/nodeagent"
)

// A randomized convergence test on the fake clock (seed logged): a total
// cpu load spread evenly over the Deployment's running pods (as a load
// balancer would), random targets, bounds and behavior; after each change
// of load the autoscaler must settle, within a bounded simulated time,
// on a size where kube's rule proposes no change, never leaving its
// bounds on the way.
func TestConvergenceRandomized(t *testing.T) {
	t.Parallel()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	h := newHarness(t)
	h.createDeployment("load", 1, "1m")
	target := int32([]int{40, 50, 60, 80}[rng.IntN(4)])
	minR, maxR := int32(1+rng.IntN(2)), int32(4+rng.IntN(5))
	down := int32([]int{0, 30, 60}[rng.IntN(3)])
	upPods := int32(1 + rng.IntN(4))
	b := &autoscalingv2.HorizontalPodAutoscalerBehavior{
		ScaleUp: &autoscalingv2.HPAScalingRules{Policies: []autoscalingv2.HPAScalingPolicy{
			{Type: autoscalingv2.PodsScalingPolicy, Value: upPods, PeriodSeconds: 15}}},
		ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: &down, Policies: []autoscalingv2.HPAScalingPolicy{
			{Type: autoscalingv2.PercentScalingPolicy, Value: 50, PeriodSeconds: 15}}},
	}
	h.createHPA("load", "load", minR, maxR, cpuTarget(target), b)
	t.Logf("target %d%%, replicas [%d, %d], scale-up %d pods/15s, scale-down 50%%/15s after %ds", target, minR, maxR, upPods, down)

	for round := range 3 {
		load := int64(20 + rng.IntN(int(maxR)*int(target)*3/2))
		t.Logf("round %d: total load %dm", round, load)
		stable, last := 0, int32(-1)
		for step := 0; stable < 8; step++ {
			if step > 80 {
				t.Fatalf("round %d (seed %d): no steady size after %d syncs (last %d)", round, seed, step, last)
			}
			n := h.spread("load", load)
			h.step(15 * time.Second)
			r := h.replicas("load")
			if r < minR || r > maxR {
				t.Fatalf("round %d: %d replicas outside [%d, %d]", round, r, minR, maxR)
			}
			if r == last && int32(n) == r {
				stable++
			} else {
				stable = 0
			}
			last = r
		}
		a := h.hpa("load")
		cur := a.Status.CurrentMetrics
		if len(cur) != 1 || cur[0].Resource == nil || cur[0].Resource.Current.AverageUtilization == nil {
			t.Fatalf("round %d: status %+v", round, a.Status)
		}
		util := *cur[0].Resource.Current.AverageUtilization
		ratio := float64(util) / float64(target)
		proposal := int32(math.Ceil(ratio * float64(last)))
		settled := (ratio >= 0.9 && ratio <= 1.1) || min(max(proposal, minR), maxR) == last
		if !settled || a.Status.DesiredReplicas != last {
			t.Fatalf("round %d (seed %d): settled on %d replicas at %d%% of a %d%% target (load %dm): kube would propose %d; status %+v",
				round, seed, last, util, target, load, proposal, a.Status)
		}
		t.Logf("round %d: settled on %d replicas at %d%%", round, last, util)
	}
}

// spread sets each running pod's cpu usage to an even share of load and
// returns how many pods share it.
func (h *harness) spread(app string, load int64) int {
	h.t.Helper()
	pods := h.runningPods(app)
	if len(pods) == 0 {
		return 0
	}
	share := fmt.Sprintf("%dm", load/int64(len(pods)))
	for _, p := range pods {
		if p.Annotations[nodeagent.AnnotationCPUUsage] == share {
			continue
		}
		for range 10 {
			cur, err := h.Pods(ns).Get(h.ctx, p.Name, metav1.GetOptions{})
			if err != nil {
				break // gone
			}
			cur.Annotations[nodeagent.AnnotationCPUUsage] = share
			if _, err = h.Pods(ns).Update(h.ctx, cur, metav1.UpdateOptions{}); err == nil {
				break
			}
		}
	}
	time.Sleep(100 * time.Millisecond)
	return len(pods)
}
