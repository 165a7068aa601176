package deployment

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/setpoint-dev/setpoint/internal/controllers/podutil"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// A first rollout names its ReplicaSet <deployment>-<hash> as Kubernetes
// does, and a rolling update observed pod by pod through an independent
// watch never runs more than replicas+maxSurge pods nor fewer than
// replicas-maxUnavailable available ones; at the end every status field
// kubectl rollout status reads is right.
func TestRollingUpdateBounds(t *testing.T) {
	h := newHarness(t, Options{})
	const n, surge, unavailable = 10, 3, 2
	h.create(withRolling(newDeployment("web", n, "img:1"), intstr.FromInt32(surge), intstr.FromInt32(unavailable)))
	d := h.waitRollout("web")

	hash := podutil.ComputeHash(&d.Spec.Template, nil)
	rss := h.replicaSets(d)
	if len(rss) != 1 || rss[0].Name != "web-"+hash {
		t.Fatalf("replica sets %v, want one named web-%s", names(rss), hash)
	}
	first := rss[0]
	if first.Labels[appsv1.DefaultDeploymentUniqueLabelKey] != hash || first.Spec.Selector.MatchLabels[appsv1.DefaultDeploymentUniqueLabelKey] != hash ||
		first.Spec.Template.Labels[appsv1.DefaultDeploymentUniqueLabelKey] != hash {
		t.Errorf("hash label missing from labels, selector or template: %v %v %v", first.Labels, first.Spec.Selector, first.Spec.Template.Labels)
	}
	if first.Annotations[RevisionAnnotation] != "1" || d.Annotations[RevisionAnnotation] != "1" {
		t.Errorf("revision: replica set %q, deployment %q", first.Annotations[RevisionAnnotation], d.Annotations[RevisionAnnotation])
	}
	if first.Annotations[DesiredReplicasAnnotation] != "10" || first.Annotations[MaxReplicasAnnotation] != "13" {
		t.Errorf("replica annotations %v", first.Annotations)
	}

	var maxActive, minAvailable = 0, n
	w := h.watchPods("web", func(pods map[string]*corev1.Pod) error {
		active, avail := counts(pods)
		maxActive, minAvailable = max(maxActive, active), min(minAvailable, avail)
		if active > n+surge {
			return fmt.Errorf("%d pods running, more than %d+%d", active, n, surge)
		}
		if avail < n-unavailable {
			return fmt.Errorf("%d pods available, fewer than %d-%d", avail, n, unavailable)
		}
		return nil
	})
	h.mutate("web", setImage("img:2"))
	d = h.waitRollout("web")
	h.eventually("old replica set drained", func() error {
		for _, rs := range h.replicaSets(d) {
			if rs.UID == first.UID && (rs.Status.Replicas != 0 || *rs.Spec.Replicas != 0) {
				return fmt.Errorf("old replica set has %d/%d", *rs.Spec.Replicas, rs.Status.Replicas)
			}
		}
		return nil
	})
	h.eventually("old pods gone", func() error {
		list, err := h.pods.List(context.Background(), metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			return err
		}
		if len(list.Items) != n {
			return fmt.Errorf("%d pods", len(list.Items))
		}
		return nil
	})
	events := w.finish()
	t.Logf("watch: %d events, at most %d pods, at least %d available", events, maxActive, minAvailable)
	if maxActive <= n {
		t.Errorf("the rollout never surged (max %d pods): the watcher saw nothing of it", maxActive)
	}

	d = h.get("web")
	st := d.Status
	if st.Replicas != n || st.UpdatedReplicas != n || st.ReadyReplicas != n || st.AvailableReplicas != n || st.UnavailableReplicas != 0 || st.ObservedGeneration != d.Generation {
		t.Errorf("final status %+v", st)
	}
	if c := condition(d, appsv1.DeploymentAvailable); c == nil || c.Status != corev1.ConditionTrue || c.Reason != ReasonMinimumAvailable {
		t.Errorf("Available condition %+v", c)
	}
	newHash := podutil.ComputeHash(&d.Spec.Template, nil)
	if c := condition(d, appsv1.DeploymentProgressing); c == nil || c.Status != corev1.ConditionTrue || c.Reason != ReasonNewRSAvailable ||
		!strings.Contains(c.Message, "web-"+newHash) {
		t.Errorf("Progressing condition %+v", c)
	}
	if d.Annotations[RevisionAnnotation] != "2" {
		t.Errorf("deployment revision %q, want 2", d.Annotations[RevisionAnnotation])
	}
	h.eventually("ScalingReplicaSet events", func() error {
		list, err := h.events.List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return err
		}
		want := []string{
			"Scaled up replica set web-" + hash + " from 0 to 10",
			"Scaled up replica set web-" + newHash + " from 0 to 3",
			"Scaled down replica set web-" + hash + " from 10 to 8",
		}
		for _, m := range want {
			found := false
			for _, e := range list.Items {
				if e.Reason == "ScalingReplicaSet" && e.Source.Component == EventSource && e.InvolvedObject.Name == "web" && e.Message == m {
					found = true
				}
			}
			if !found {
				return fmt.Errorf("no event %q", m)
			}
		}
		return nil
	})
}

// Recreate never has pods of two templates at once, as seen by an
// independent watch (terminating pods count: they may still run).
func TestRecreate(t *testing.T) {
	h := newHarness(t, Options{})
	d := newDeployment("batch", 3, "img:1")
	d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}
	h.create(d)
	h.waitRollout("batch")
	sawNew := false
	w := h.watchPods("batch", func(pods map[string]*corev1.Pod) error {
		hashes := map[string]int{}
		for _, p := range pods {
			if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
				hashes[p.Labels[appsv1.DefaultDeploymentUniqueLabelKey]]++
			}
		}
		if len(hashes) > 1 {
			return fmt.Errorf("pods of %d templates at once: %v", len(hashes), hashes)
		}
		return nil
	})
	h.mutate("batch", setImage("img:2"))
	d = h.waitRollout("batch")
	newHash := podutil.ComputeHash(&d.Spec.Template, nil)
	h.eventually("only new pods", func() error {
		list, err := h.pods.List(context.Background(), metav1.ListOptions{LabelSelector: "app=batch"})
		if err != nil {
			return err
		}
		for _, p := range list.Items {
			if p.Labels[appsv1.DefaultDeploymentUniqueLabelKey] != newHash {
				return fmt.Errorf("old pod %s left", p.Name)
			}
			sawNew = true
		}
		if len(list.Items) != 3 {
			return fmt.Errorf("%d pods", len(list.Items))
		}
		return nil
	})
	w.finish()
	if !sawNew {
		t.Fatal("no new pod")
	}
	if d.Annotations[RevisionAnnotation] != "2" {
		t.Errorf("revision %q", d.Annotations[RevisionAnnotation])
	}
}

func names(rss []*appsv1.ReplicaSet) []string {
	var out []string
	for _, rs := range rss {
		out = append(out, rs.Name)
	}
	return out
}

// Scaling a Deployment in the middle of a stalled rolling update shares
// the new replicas among the old and new ReplicaSets in proportion to their
// sizes (Kubernetes' proportional scaling), without moving the rollout.
func TestProportionalScalingMidRollout(t *testing.T) {
	h := newHarness(t, Options{})
	h.create(withRolling(newDeployment("prop", 10, "img:1"), intstr.FromInt32(3), intstr.FromInt32(2)))
	d := h.waitRollout("prop")
	// The new template's pods never become ready: the rollout stalls at
	// old 8 + new 5 = 13 pods.
	h.mutate("prop", func(d *appsv1.Deployment) {
		d.Spec.Template.Spec.Containers[0].Image = "img:2"
		d.Spec.Template.Labels[noReadyLabel] = "yes"
	})
	sizes := func(want map[string]int32) func() error {
		return func() error {
			got := map[string]int32{}
			for _, rs := range h.replicaSets(d) {
				got[rs.Spec.Template.Spec.Containers[0].Image] = *rs.Spec.Replicas
				if rs.Status.Replicas != *rs.Spec.Replicas {
					return fmt.Errorf("%s has %d of %d pods", rs.Name, rs.Status.Replicas, *rs.Spec.Replicas)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				return fmt.Errorf("sizes %v, want %v", got, want)
			}
			return nil
		}
	}
	h.eventually("stalled rollout", sizes(map[string]int32{"img:1": 8, "img:2": 5}))
	h.mutate("prop", func(d *appsv1.Deployment) { d.Spec.Replicas = new(int32(20)) })
	// 20 + 3 surge = 23 shared 8:5 -> 14 and 9.
	h.eventually("proportional shares", sizes(map[string]int32{"img:1": 14, "img:2": 9}))
	for _, rs := range h.replicaSets(d) {
		if rs.Annotations[DesiredReplicasAnnotation] != "20" || rs.Annotations[MaxReplicasAnnotation] != "23" {
			t.Errorf("%s annotations %v", rs.Name, rs.Annotations)
		}
	}
	d = h.get("prop")
	if rolloutDone(d) == nil {
		t.Error("a stalled rollout looks done")
	}
}
