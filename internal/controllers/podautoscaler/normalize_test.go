package podautoscaler

import (
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
)

func rules(sel autoscalingv2.ScalingPolicySelect, window int32, ps ...autoscalingv2.HPAScalingPolicy) *autoscalingv2.HPAScalingRules {
	return &autoscalingv2.HPAScalingRules{SelectPolicy: &sel, StabilizationWindowSeconds: &window, Policies: ps}
}

func pods(v, period int32) autoscalingv2.HPAScalingPolicy {
	return autoscalingv2.HPAScalingPolicy{Type: autoscalingv2.PodsScalingPolicy, Value: v, PeriodSeconds: period}
}

func percent(v, period int32) autoscalingv2.HPAScalingPolicy {
	return autoscalingv2.HPAScalingPolicy{Type: autoscalingv2.PercentScalingPolicy, Value: v, PeriodSeconds: period}
}

// The rate policies: Max picks the largest change, Min the smallest,
// Disabled none; changes within a policy's period count against it.
func TestBehaviorRatePolicies(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	up := rules(autoscalingv2.MaxChangePolicySelect, 0, pods(4, 60), percent(100, 60))
	down := rules(autoscalingv2.MaxChangePolicySelect, 0, pods(1, 60), percent(10, 60))
	b := &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: up, ScaleDown: down}
	m := &memory{}
	for _, c := range []struct {
		current, desired int32
		want             limit
	}{
		{2, 20, limit{replicas: 6, reason: "ScaleUpLimit"}},   // max(2+4, 2×2)
		{10, 40, limit{replicas: 20, reason: "ScaleUpLimit"}}, // max(14, 20)
		{10, 15, limit{replicas: 15, reason: "DesiredWithinRange"}},
		{10, 200, limit{replicas: 20, reason: "ScaleUpLimit"}},
		{10, 1, limit{replicas: 9, reason: "ScaleDownLimit"}}, // min(10-1, 9) → max change
	} {
		got := m.behaviorLimit(b, c.current, c.desired, 1, 100, now)
		if got.replicas != c.want.replicas || got.reason != c.want.reason {
			t.Errorf("%d → %d: got %+v, want %+v", c.current, c.desired, got, c.want)
		}
	}
	// Min picks the smallest change.
	bMin := &autoscalingv2.HorizontalPodAutoscalerBehavior{
		ScaleUp: rules(autoscalingv2.MinChangePolicySelect, 0, pods(4, 60), percent(100, 60)), ScaleDown: down}
	if got := m.behaviorLimit(bMin, 10, 40, 1, 100, now); got.replicas != 14 {
		t.Errorf("min policy: %+v", got)
	}
	// Disabled: no scale-up at all.
	bOff := &autoscalingv2.HorizontalPodAutoscalerBehavior{
		ScaleUp: rules(autoscalingv2.DisabledPolicySelect, 0, pods(4, 60)), ScaleDown: down}
	if got := m.behaviorLimit(bOff, 10, 40, 1, 100, now); got.replicas != 10 {
		t.Errorf("disabled policy: %+v", got)
	}
	// A scale-up of 4 within the period leaves no room for more.
	m.storeScaleEvent(b, 2, 6, now)
	if got := m.behaviorLimit(b, 6, 20, 1, 100, now.Add(30*time.Second)); got.replicas != 6 {
		t.Errorf("within the period after +4: %+v", got)
	}
	if got := m.behaviorLimit(b, 6, 20, 1, 100, now.Add(61*time.Second)); got.replicas != 12 {
		t.Errorf("after the period: %+v", got)
	}
	// Bounds: maxReplicas, minReplicas.
	if got := m.behaviorLimit(b, 10, 40, 1, 12, now.Add(time.Hour)); got.replicas != 12 || got.reason != "TooManyReplicas" {
		t.Errorf("max replicas: %+v", got)
	}
}

// Stabilization: within the scale-down window the highest recent
// recommendation holds; the scale-up window holds the lowest.
func TestStabilization(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	b := &autoscalingv2.HorizontalPodAutoscalerBehavior{
		ScaleUp:   rules(autoscalingv2.MaxChangePolicySelect, 60, pods(4, 15)),
		ScaleDown: rules(autoscalingv2.MaxChangePolicySelect, 300, percent(100, 15)),
	}
	m := &memory{}
	m.stabilizeBehavior(b, 5, 8, now)
	if got, reason, _ := m.stabilizeBehavior(b, 8, 3, now.Add(time.Minute)); got != 8 || reason != "ScaleDownStabilized" {
		t.Errorf("down within the window: %d %s", got, reason)
	}
	if got, _, _ := m.stabilizeBehavior(b, 8, 3, now.Add(6*time.Minute)); got != 3 {
		t.Errorf("down after the window: %d", got)
	}
	if got, reason, _ := m.stabilizeBehavior(b, 3, 9, now.Add(6*time.Minute+10*time.Second)); got != 3 || reason != "ScaleUpStabilized" {
		t.Errorf("up within the up window: %d %s", got, reason)
	}
	// Without a behavior: the highest recommendation of 5 minutes.
	m2 := &memory{}
	m2.stabilize(7, 5*time.Minute, now)
	if got := m2.stabilize(2, 5*time.Minute, now.Add(4*time.Minute)); got != 7 {
		t.Errorf("default window: %d", got)
	}
	if got := m2.stabilize(2, 5*time.Minute, now.Add(10*time.Minute)); got != 2 {
		t.Errorf("default window passed: %d", got)
	}
	if l := rulesLimit(1, 10, 1, 10); l.replicas != 4 || l.reason != "ScaleUpLimit" {
		t.Errorf("default scale-up limit: %+v", l)
	}
	if l := rulesLimit(5, 12, 1, 10); l.replicas != 10 || l.reason != "TooManyReplicas" {
		t.Errorf("max: %+v", l)
	}
	if l := rulesLimit(5, 0, 2, 10); l.replicas != 2 || l.reason != "TooFewReplicas" {
		t.Errorf("min: %+v", l)
	}
}
