package replicaset

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestScaleUpAndDown: the controller creates pods from the template with
// the controller reference and scales to exact counts both ways.
func TestScaleUpAndDown(t *testing.T) {
	h := newHarness(t, Options{}, 0)
	rs := h.create(newRS("web", 5))
	pods := h.waitPods("web", 5)
	for _, p := range pods {
		ref := metav1.GetControllerOf(p)
		if !strings.HasPrefix(p.Name, "web-") || p.Labels["app"] != "web" || p.Annotations["note"] != "from-template" ||
			ref == nil || ref.Kind != "ReplicaSet" || ref.Name != "web" || ref.UID != rs.UID ||
			ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion {
			t.Fatalf("pod not built from the template: %+v", p.ObjectMeta)
		}
	}
	h.scale("web", 2)
	h.waitPods("web", 2)
	h.scale("web", 7)
	h.waitPods("web", 7)
	h.scale("web", 0)
	h.waitPods("web", 0)
	h.eventually("events", func() error {
		ev := h.eventReasons("web")
		if ev["SuccessfulCreate"] < 1 || ev["SuccessfulDelete"] < 1 {
			return fmt.Errorf("events %v", ev)
		}
		return nil
	})
}

// TestAdoptAndRelease: matching orphans are adopted instead of new pods
// being created; a relabelled pod is released and replaced.
func TestAdoptAndRelease(t *testing.T) {
	h := newHarness(t, Options{}, 0)
	ctx := context.Background()
	for i := range 2 {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("orphan-%d", i), Labels: map[string]string{"app": "web"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "img"}}}}
		if _, err := h.pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// The controller adopts what its cache holds: a ReplicaSet synced before
	// its pod watch delivered the orphans would create three pods (so would
	// kube-controller-manager's).
	h.eventually("orphans in the controller's cache", func() error {
		if n := h.r.podInf.Indexer().Len(); n != 2 {
			return fmt.Errorf("%d pods cached", n)
		}
		return nil
	})
	rs := h.create(newRS("web", 3))
	pods := h.waitPods("web", 3)
	adopted := 0
	for _, p := range pods {
		if strings.HasPrefix(p.Name, "orphan-") {
			adopted++
		}
	}
	if adopted != 2 {
		t.Fatalf("adopted %d orphans, want 2", adopted)
	}
	if n := h.transport.podPosts.Load(); n != 1 {
		t.Fatalf("%d pods created, want 1 (two adopted)", n)
	}

	// Relabel one: released (owner reference removed) and replaced.
	victim := pods[0]
	for range 20 {
		p, err := h.pods.Get(ctx, victim.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		p.Labels = map[string]string{"app": "elsewhere"}
		if _, err = h.pods.Update(ctx, p, metav1.UpdateOptions{}); err == nil {
			break
		}
	}
	h.eventually("release", func() error {
		p, err := h.pods.Get(ctx, victim.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if len(p.OwnerReferences) != 0 {
			return fmt.Errorf("still owned: %+v", p.OwnerReferences)
		}
		return nil
	})
	for _, p := range h.waitPods("web", 3) {
		if p.Name == victim.Name || p.Labels["app"] != "web" {
			t.Fatalf("released pod still counted: %s", p.Name)
		}
	}
	_ = rs
}

// TestInFlightWritesBounded: however large its slow-start batches, the
// controller never has more pod creates in flight than MaxInFlightWrites,
// and still creates every pod.
func TestInFlightWritesBounded(t *testing.T) {
	h := newHarness(t, Options{MaxInFlightWrites: 3}, 0)
	h.create(newRS("bounded", 60))
	h.waitPods("bounded", 60)
	if got := h.transport.maxInFlight.Load(); got != 3 {
		t.Fatalf("at most %d pod creates were in flight at once, want exactly the limit 3", got)
	}
}
