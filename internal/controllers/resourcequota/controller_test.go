package resourcequota

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
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

// TestDeletionReleasesObjectCount: the delete of an object of a kind the
// controller has no typed watch on (a ReplicaSet, counted by
// count/replicasets.apps) releases its usage at once, not at the resync
// (an hour here) — the conformance spec "capture the life of a replica
// set" waits for it.
func TestDeletionReleasesObjectCount(t *testing.T) {
	h := newHarness(t, Options{ResyncPeriod: time.Hour})
	h.createQuota("q", rl("count/replicasets.apps", "2", "count/deployments.apps", "1"))
	h.wantStatus("q", rl("count/replicasets.apps", "0", "count/deployments.apps", "0"))
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "rs"}, Spec: appsv1.ReplicaSetSpec{
		Replicas: ptr.To[int32](0),
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "rs"}},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "rs"}},
			Spec: newPod("", "").Spec}}}
	if _, err := h.replicaSets.Create(h.ctx, rs, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.wantStatus("q", rl("count/replicasets.apps", "1", "count/deployments.apps", "0"))
	if err := h.replicaSets.Delete(h.ctx, "rs", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	h.wantStatus("q", rl("count/replicasets.apps", "0", "count/deployments.apps", "0"))
}

// TestCreateIsNotRecounted: an object's creation is charged by admission
// and triggers no recount, as in Kubernetes (a recount racing a create
// still in flight could undo its charge). The status is set by hand to 3
// pods used (as if three creates were charged and not yet stored): after
// a pod's create it reads 4 and stays so; the pod's deletion recounts.
func TestCreateIsNotRecounted(t *testing.T) {
	h := newHarness(t, Options{ResyncPeriod: time.Hour})
	h.createQuota("q", rl("pods", "5"))
	h.wantStatus("q", rl("pods", "0"))
	q, err := h.quotas.Get(h.ctx, "q", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	q.Status.Used = rl("pods", "3")
	if _, err := h.quotas.UpdateStatus(h.ctx, q, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.pods.Create(h.ctx, newPod("a", "100m"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.wantStatus("q", rl("pods", "4"))
	// Nothing to wait for but time: a recount would take well under this.
	time.Sleep(time.Second)
	h.wantStatus("q", rl("pods", "4"))
	if err := h.pods.Delete(h.ctx, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	h.wantStatus("q", rl("pods", "0"))
}
