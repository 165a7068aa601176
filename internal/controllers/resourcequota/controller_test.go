package resourcequota

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestUsageFollowsObjects: the status is filled on create, charged by
// admission, released when pods finish or objects are deleted, and
// follows a change of spec.hard.
func TestUsageFollowsObjects(t *testing.T) {
	h := newHarness(t, Options{})
	h.createQuota("q", rl("pods", "2", "requests.cpu", "1", "count/configmaps", "3"))
	h.wantStatus("q", rl("pods", "0", "requests.cpu", "0", "count/configmaps", "0"))
	for _, p := range []*corev1.Pod{newPod("a", "300m"), newPod("b", "500m")} {
		if _, err := h.pods.Create(h.ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	h.wantStatus("q", rl("pods", "2", "requests.cpu", "800m", "count/configmaps", "0"))
	if _, err := h.pods.Create(h.ctx, newPod("c", "100m"), metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("third pod: want 403, got %v", err)
	}
	if err := h.finish("a", corev1.PodSucceeded); err != nil {
		t.Fatal(err)
	}
	h.wantStatus("q", rl("pods", "1", "requests.cpu", "500m", "count/configmaps", "0"))
	if _, err := h.pods.Create(h.ctx, newPod("c", "100m"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("pod after one finished: %v", err)
	}
	if err := h.pods.Delete(h.ctx, "b", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	h.wantStatus("q", rl("pods", "1", "requests.cpu", "100m", "count/configmaps", "0"))

	q, err := h.quotas.Get(h.ctx, "q", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	q.Spec.Hard = rl("pods", "5", "count/pods", "9")
	if _, err := h.quotas.Update(h.ctx, q, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.wantStatus("q", rl("pods", "1", "count/pods", "2"))
}
