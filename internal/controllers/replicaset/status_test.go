package replicaset

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

// TestStatusFields: replicas, fullyLabeledReplicas (an adopted orphan
// lacking a template label is not fully labelled), readyReplicas,
// availableReplicas under minReadySeconds on an injected clock, and
// observedGeneration.
func TestStatusFields(t *testing.T) {
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakePassiveClock(t0)
	h := newHarness(t, Options{Clock: clk}, 0)
	ctx := context.Background()
	orphan := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "orphan", Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "img"}}}}
	if _, err := h.pods.Create(ctx, orphan, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rs := newRS("web", 3)
	rs.Spec.MinReadySeconds = 10
	rs.Spec.Template.Labels = map[string]string{"app": "web", "tier": "front"}
	h.create(rs)
	pods := h.waitPods("web", 3)
	h.waitStatus("web", appsv1.ReplicaSetStatus{Replicas: 3, FullyLabeledReplicas: 2})

	for _, p := range pods {
		h.setReady(p.Name, t0)
	}
	h.waitStatus("web", appsv1.ReplicaSetStatus{Replicas: 3, FullyLabeledReplicas: 2, ReadyReplicas: 3})

	// Time passes on the injected clock; any sync now sees them available.
	clk.SetTime(t0.Add(10 * time.Second))
	h.mutate("web", func(rs *appsv1.ReplicaSet) { rs.Annotations = map[string]string{"poke": "1"} })
	h.waitStatus("web", appsv1.ReplicaSetStatus{Replicas: 3, FullyLabeledReplicas: 2, ReadyReplicas: 3, AvailableReplicas: 3})

	// A spec change bumps generation; status follows.
	cur := h.scale("web", 1)
	h.waitPods("web", 1)
	got, _ := h.rss.Get(ctx, "web", metav1.GetOptions{})
	if got.Status.ObservedGeneration != cur.Generation {
		t.Fatalf("observedGeneration %d, want %d", got.Status.ObservedGeneration, cur.Generation)
	}
}

// waitStatus waits until the counters of the status equal want's.
func (h *harness) waitStatus(name string, want appsv1.ReplicaSetStatus) {
	h.t.Helper()
	h.eventually("status", func() error {
		rs, err := h.rss.Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		s := rs.Status
		if s.Replicas != want.Replicas || s.FullyLabeledReplicas != want.FullyLabeledReplicas ||
			s.ReadyReplicas != want.ReadyReplicas || s.AvailableReplicas != want.AvailableReplicas ||
			s.ObservedGeneration != rs.Generation {
			return fmt.Errorf("status %+v (generation %d), want counters %+v", s, rs.Generation, want)
		}
		return nil
	})
}

// setReady marks a pod Running and Ready since at, through the status
// subresource, as a kubelet would.
func (h *harness) setReady(name string, at time.Time) {
	h.t.Helper()
	ctx := context.Background()
	for range 20 {
		p, err := h.pods.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			h.t.Fatal(err)
		}
		p.Status.Phase = corev1.PodRunning
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue,
			LastTransitionTime: metav1.NewTime(at)}}
		if _, err = h.pods.UpdateStatus(ctx, p, metav1.UpdateOptions{}); err == nil {
			return
		}
	}
	h.t.Fatalf("could not mark %s ready", name)
}

// TestNextAvailable: the requeue delay is the time until the first ready
// pod becomes available.
func TestNextAvailable(t *testing.T) {
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	ready := func(since time.Time) *corev1.Pod {
		return &corev1.Pod{Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodReady,
			Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(since)}}}}
	}
	pods := []*corev1.Pod{ready(t0), ready(t0.Add(-7 * time.Second)), ready(t0.Add(-20 * time.Second)), {}}
	if d := nextAvailable(pods, 10, t0); d < 3*time.Second || d > 3*time.Second+100*time.Millisecond {
		t.Fatalf("next %v, want just over 3s", d)
	}
	if d := nextAvailable(pods, 0, t0); d != 0 {
		t.Fatalf("minReadySeconds 0: %v", d)
	}
	if d := nextAvailable(pods[2:], 10, t0); d != 0 {
		t.Fatalf("all available: %v", d)
	}
}
