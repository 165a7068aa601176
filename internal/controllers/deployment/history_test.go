package deployment

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/setpoint-dev/setpoint/internal/controllers/podutil"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	testclock "k8s.io/utils/clock/testing"
)

// revisions maps each ReplicaSet's image to its revision annotation.
func (h *harness) revisions(d *appsv1.Deployment) map[string]string {
	out := map[string]string{}
	for _, rs := range h.replicaSets(d) {
		out[rs.Spec.Template.Spec.Containers[0].Image] = rs.Annotations[RevisionAnnotation]
	}
	return out
}

// Every template change gets the next revision; old ReplicaSets beyond
// revisionHistoryLimit are deleted, oldest first; setting the template back
// to an older one (what kubectl rollout undo does) makes that ReplicaSet new
// again with the next revision and its old number in revision-history,
// instead of creating another one.
func TestRevisionsHistoryAndRollback(t *testing.T) {
	h := newHarness(t, Options{})
	d := newDeployment("app", 2, "img:1")
	d.Spec.RevisionHistoryLimit = new(int32(2))
	h.create(d)
	d = h.waitRollout("app")
	for i := 2; i <= 4; i++ {
		h.mutate("app", setImage(fmt.Sprintf("img:%d", i)))
		d = h.waitRollout("app")
		if got := d.Annotations[RevisionAnnotation]; got != fmt.Sprint(i) {
			t.Fatalf("after image %d the deployment's revision is %q", i, got)
		}
	}
	want := map[string]string{"img:2": "2", "img:3": "3", "img:4": "4"}
	h.eventually("history trimmed to 2 old revisions", func() error {
		if got := h.revisions(d); fmt.Sprint(got) != fmt.Sprint(want) {
			return fmt.Errorf("revisions %v, want %v", got, want)
		}
		return nil
	})
	var rev2 *appsv1.ReplicaSet
	for _, rs := range h.replicaSets(d) {
		if rs.Spec.Template.Spec.Containers[0].Image == "img:2" {
			rev2 = rs
		}
	}

	// Roll back to revision 2.
	h.mutate("app", setImage("img:2"))
	d = h.waitRollout("app")
	want = map[string]string{"img:2": "5", "img:3": "3", "img:4": "4"}
	h.eventually("rollback reuses revision 2's replica set", func() error {
		if got := h.revisions(d); fmt.Sprint(got) != fmt.Sprint(want) {
			return fmt.Errorf("revisions %v, want %v", got, want)
		}
		return nil
	})
	for _, rs := range h.replicaSets(d) {
		if rs.Spec.Template.Spec.Containers[0].Image != "img:2" {
			continue
		}
		if rs.UID != rev2.UID || rs.Annotations[RevisionHistoryAnnotation] != "2" || *rs.Spec.Replicas != 2 {
			t.Errorf("rolled-back replica set %s uid %s (was %s) history %q replicas %d", rs.Name, rs.UID, rev2.UID,
				rs.Annotations[RevisionHistoryAnnotation], *rs.Spec.Replicas)
		}
	}
	h.eventually("deployment revision 5", func() error {
		if got := h.get("app").Annotations[RevisionAnnotation]; got != "5" {
			return fmt.Errorf("revision %q", got)
		}
		return nil
	})
}

// A paused Deployment makes no rollout progress but still scales; resuming
// it rolls out the template changed meanwhile. The Progressing condition
// records the pause.
func TestPauseAndResume(t *testing.T) {
	h := newHarness(t, Options{})
	h.create(newDeployment("p", 2, "img:1"))
	d := h.waitRollout("p")
	first := h.replicaSets(d)[0]

	h.mutate("p", func(d *appsv1.Deployment) {
		d.Spec.Paused = true
		d.Spec.Template.Spec.Containers[0].Image = "img:2"
		d.Spec.Replicas = new(int32(4))
	})
	h.eventually("paused deployment scaled, not rolled", func() error {
		d = h.get("p")
		if d.Status.ObservedGeneration < d.Generation {
			return fmt.Errorf("generation %d not observed", d.Generation)
		}
		if c := condition(d, appsv1.DeploymentProgressing); c == nil || c.Reason != ReasonPaused || c.Status != corev1.ConditionUnknown {
			return fmt.Errorf("progressing %+v", c)
		}
		rss := h.replicaSets(d)
		if len(rss) != 1 || rss[0].UID != first.UID {
			return fmt.Errorf("replica sets %v: a paused deployment rolled out", names(rss))
		}
		if *rss[0].Spec.Replicas != 4 || d.Status.AvailableReplicas != 4 {
			return fmt.Errorf("replicas %d available %d, want 4", *rss[0].Spec.Replicas, d.Status.AvailableReplicas)
		}
		return nil
	})
	// Paused, the rollout must not be reported complete.
	if rolloutDone(d) == nil {
		t.Fatal("a paused, changed deployment looks rolled out")
	}

	h.mutate("p", func(d *appsv1.Deployment) { d.Spec.Paused = false })
	d = h.waitRollout("p")
	if img := d.Spec.Template.Spec.Containers[0].Image; img != "img:2" {
		t.Fatalf("image %s", img)
	}
	if got := h.revisions(d); got["img:2"] != "2" || got["img:1"] != "1" {
		t.Errorf("revisions %v", got)
	}
	h.eventually("complete after resume", func() error {
		if c := condition(h.get("p"), appsv1.DeploymentProgressing); c == nil || c.Reason != ReasonNewRSAvailable {
			return fmt.Errorf("progressing %+v", c)
		}
		return nil
	})
}

// With pods that never become ready, the Progressing condition turns
// False/ProgressDeadlineExceeded once progressDeadlineSeconds pass on the
// controller's clock without progress — fired by the controller's own
// re-check timer, nothing else touching the Deployment.
func TestProgressDeadlineExceeded(t *testing.T) {
	clk := testclock.NewFakeClock(time.Now())
	h := newHarness(t, Options{Clock: clk})
	d := newDeployment("stuck", 2, "img:1")
	d.Spec.Template.Labels[noReadyLabel] = "yes"
	d.Spec.ProgressDeadlineSeconds = new(int32(30))
	h.create(d)
	req := request(ns, "stuck")
	h.eventually("pods created, progress check scheduled", func() error {
		d = h.get("stuck")
		c := condition(d, appsv1.DeploymentProgressing)
		if d.Status.UpdatedReplicas != 2 || c == nil || c.Status != corev1.ConditionTrue {
			return fmt.Errorf("updated %d progressing %+v", d.Status.UpdatedReplicas, c)
		}
		if !h.r.checks.pending(req) {
			return fmt.Errorf("no progress check scheduled")
		}
		return nil
	})
	if c := condition(d, appsv1.DeploymentAvailable); c == nil || c.Status != corev1.ConditionFalse || c.Reason != ReasonMinimumUnavailable {
		t.Errorf("available %+v", c)
	}
	clk.Step(20 * time.Second)
	time.Sleep(100 * time.Millisecond) // nothing may happen: a negative check
	if c := condition(h.get("stuck"), appsv1.DeploymentProgressing); c.Reason == ReasonTimedOut {
		t.Fatal("timed out before the deadline")
	}
	clk.Step(11 * time.Second)
	h.eventually("ProgressDeadlineExceeded", func() error {
		c := condition(h.get("stuck"), appsv1.DeploymentProgressing)
		if c == nil || c.Status != corev1.ConditionFalse || c.Reason != ReasonTimedOut ||
			!strings.Contains(c.Message, "has timed out progressing") {
			return fmt.Errorf("progressing %+v", c)
		}
		return nil
	})
	if h.r.checks.pending(req) {
		t.Error("a timed-out deployment still has a progress check scheduled")
	}
}

// A ReplicaSet of someone else holding the hash name makes the Deployment
// bump status.collisionCount and use the next hash.
func TestHashCollision(t *testing.T) {
	h := newHarness(t, Options{})
	d := newDeployment("c", 1, "img:1")
	d.Spec.Paused = true // no ReplicaSet yet: learn the defaulted template first
	d = h.create(d)
	hash := podutil.ComputeHash(&d.Spec.Template, nil)
	squatter := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "c-" + hash, Labels: map[string]string{"app": "other"}},
		Spec: appsv1.ReplicaSetSpec{Replicas: new(int32(0)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "other"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "other"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "other"}}}}},
	}
	if _, err := h.rss.Create(context.Background(), squatter, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.mutate("c", func(d *appsv1.Deployment) { d.Spec.Paused = false })
	d = h.waitRollout("c")
	if d.Status.CollisionCount == nil || *d.Status.CollisionCount != 1 {
		t.Fatalf("collisionCount %v", d.Status.CollisionCount)
	}
	rss := h.replicaSets(d)
	want := "c-" + podutil.ComputeHash(&d.Spec.Template, d.Status.CollisionCount)
	if len(rss) != 1 || rss[0].Name != want {
		t.Fatalf("replica sets %v, want [%s]", names(rss), want)
	}
}

// An orphaned ReplicaSet matching the selector is adopted (and, its
// template being the Deployment's, used as the new one); one controlled by
// the Deployment whose labels stop matching is released.
func TestAdoptAndRelease(t *testing.T) {
	h := newHarness(t, Options{})
	d := newDeployment("a", 2, "img:1")
	d.Spec.Paused = true
	d = h.create(d)
	hash := podutil.ComputeHash(&d.Spec.Template, nil)
	orphan := newReplicaSetObject(d, hash)
	orphan.OwnerReferences = nil
	orphan.Spec.Replicas = new(int32(2))
	if _, err := h.rss.Create(context.Background(), orphan, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.mutate("a", func(d *appsv1.Deployment) { d.Spec.Paused = false })
	d = h.waitRollout("a")
	rss := h.replicaSets(d)
	if len(rss) != 1 || rss[0].Name != orphan.Name {
		t.Fatalf("replica sets %v, want the adopted %s", names(rss), orphan.Name)
	}
	if c := condition(d, appsv1.DeploymentProgressing); c == nil || c.Status != corev1.ConditionTrue {
		t.Errorf("progressing %+v", c)
	}

	// Relabel it out of the selector: released.
	rs := rss[0]
	patch := `{"metadata":{"labels":{"app":"elsewhere"}}}`
	if _, err := h.rss.Patch(context.Background(), rs.Name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	h.eventually("released", func() error {
		cur, err := h.rss.Get(context.Background(), rs.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if ref := metav1.GetControllerOf(cur); ref != nil {
			return fmt.Errorf("still controlled by %s", ref.Name)
		}
		return nil
	})
	// The Deployment makes a new ReplicaSet of its own.
	h.eventually("replacement", func() error {
		rss := h.replicaSets(d)
		if len(rss) != 1 || rss[0].UID == rs.UID {
			return fmt.Errorf("replica sets %v", names(rss))
		}
		return nil
	})
}
