package podautoscaler

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A randomized check of the utilization computation against the formula
// written out directly: with every pod ready and reporting,
// desired = ceil(current utilization / target × pods) outside the 10 %
// tolerance, else the current count; with missing or unready pods, kube's
// conservative rule (missing pods at 100 % of their request below target,
// at 0 above; unready pods at 0 above) and its no-flip guard.
func TestUtilizationReplicasRandomized(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed>>7))
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	rd := readiness{cpuInitialization: 5 * time.Minute, initialDelay: 30 * time.Second}
	for iter := range 5000 {
		n := 1 + rng.IntN(12)
		target := int32(10 + rng.IntN(190))
		var pods []*corev1.Pod
		metrics := map[string]podMetric{}
		var readyUse, readyReq int64
		var missing, unready []int64 // requests of missing pods; unready pods
		for i := range n {
			req := int64(50 + rng.IntN(950))
			use := int64(rng.IntN(2000))
			p := testPod(string(rune('a'+i)), req, now.Add(-time.Hour))
			switch k := rng.IntN(10); {
			case k == 0: // no metric yet
				missing = append(missing, req)
			case k == 1: // pending
				p.Status.Phase = corev1.PodPending
				unready = append(unready, req)
			case k == 2: // deleted: ignored
				p.DeletionTimestamp = &metav1.Time{Time: now}
				metrics[p.Name] = podMetric{value: use, timestamp: now, window: 15 * time.Second}
			default:
				metrics[p.Name] = podMetric{value: use, timestamp: now, window: 15 * time.Second}
				readyUse += use
				readyReq += req
			}
			pods = append(pods, p)
		}
		current := int32(1 + rng.IntN(20))
		c := calc{pods: pods, metrics: copyMetrics(metrics), res: corev1.ResourceCPU, current: current,
			tol: tolerances{0.1, 0.1}, rd: rd, now: now}
		got, util, _, err := c.utilizationReplicas(target)
		if readyReq == 0 {
			if err == nil {
				t.Fatalf("iter %d: no ready pod with metrics, got %d without error", iter, got)
			}
			continue
		}
		if err != nil {
			t.Fatalf("iter %d: %v", iter, err)
		}
		wantUtil := int32(readyUse * 100 / readyReq)
		if util != wantUtil {
			t.Fatalf("iter %d: utilization %d, want %d", iter, util, wantUtil)
		}
		want := expected(current, wantUtil, target, readyUse, readyReq, n-len(missing)-len(unready)-deleted(pods), missing, unready)
		if got != want {
			t.Fatalf("iter %d (seed %d): %d replicas, want %d (current %d, util %d, target %d, ready %d, missing %v, unready %v)",
				iter, seed, got, want, current, wantUtil, target, readyReq, missing, unready)
		}
	}
}

// expected is the direct formula.
func expected(current, util, target int32, use, req int64, ready int, missing, unready []int64) int32 {
	ratio := float64(util) / float64(target)
	within := func(r float64) bool { return math.Abs(r-1) <= 0.1+1e-12 && r >= 0.9 && r <= 1.1 }
	if len(missing) == 0 && !(len(unready) > 0 && ratio > 1) {
		if within(ratio) {
			return current
		}
		return int32(math.Ceil(ratio * float64(ready)))
	}
	count := ready
	for _, r := range missing {
		if ratio == 1 {
			break // neither assumption applies: missing pods are left out
		}
		req += r
		count++
		if ratio < 1 {
			use += r * int64(max(100, target)) / 100
		}
	}
	if ratio > 1 {
		for _, r := range unready {
			req += r
			count++
		}
	}
	newRatio := float64(int32(use*100/req)) / float64(target)
	if within(newRatio) || (ratio < 1 && newRatio > 1) || (ratio > 1 && newRatio < 1) {
		return current
	}
	p := int32(math.Ceil(newRatio * float64(count)))
	if (newRatio < 1 && p > current) || (newRatio > 1 && p < current) {
		return current
	}
	return p
}

func deleted(pods []*corev1.Pod) int {
	n := 0
	for _, p := range pods {
		if p.DeletionTimestamp != nil {
			n++
		}
	}
	return n
}

func copyMetrics(m map[string]podMetric) map[string]podMetric {
	out := make(map[string]podMetric, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// testPod is a Running, long-ready pod of one container requesting cpu.
func testPod(name string, cpuMilli int64, started time.Time) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: *resource.NewMilliQuantity(cpuMilli, resource.DecimalSI)}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &metav1.Time{Time: started},
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Time{Time: started}}}},
	}
}

// A pod starting within the cpu initialization period counts only once
// ready and sampled after it turned ready; later, an unready pod counts
// as unready only if it never was ready after its initial delay.
func TestCPUReadiness(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	rd := readiness{cpuInitialization: 5 * time.Minute, initialDelay: 30 * time.Second}
	m := podMetric{timestamp: now, window: 15 * time.Second}
	young := testPod("young", 100, now.Add(-time.Minute))
	young.Status.Conditions[0].LastTransitionTime = metav1.Time{Time: now.Add(-10 * time.Second)}
	if !cpuUnready(young, m, rd, now) {
		t.Error("a sample from before the pod turned ready counts")
	}
	young.Status.Conditions[0].LastTransitionTime = metav1.Time{Time: now.Add(-20 * time.Second)}
	if cpuUnready(young, m, rd, now) {
		t.Error("a sample after readiness does not count")
	}
	old := testPod("old", 100, now.Add(-time.Hour))
	old.Status.Conditions[0].Status = corev1.ConditionFalse
	old.Status.Conditions[0].LastTransitionTime = metav1.Time{Time: now.Add(-time.Hour).Add(10 * time.Second)}
	if !cpuUnready(old, m, rd, now) {
		t.Error("a pod never ready since its start counts")
	}
	old.Status.Conditions[0].LastTransitionTime = metav1.Time{Time: now.Add(-time.Minute)}
	if cpuUnready(old, m, rd, now) {
		t.Error("a pod that was ready and turned unready later is not counted as ready")
	}
}
