package statefulset

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// TestOrderedReadyLifecycle: pods are created one at a time, each only
// once its predecessor is Running and Ready, with their identity; a scale
// down removes the highest ordinal first, one at a time; events are
// Kubernetes'.
func TestOrderedReadyLifecycle(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	set := h.create(newSet("web", 3, appsv1.OrderedReadyPodManagement))

	for i := range 3 {
		want := fmt.Sprintf("web-%d", i)
		h.eventually("pod "+want, func() error {
			pods := h.podsOf("web")
			if len(pods) != i+1 || pods[i].Name != want {
				return fmt.Errorf("pods %s", names(pods))
			}
			return nil
		})
		// Nothing more is created while the newest pod is not ready.
		time.Sleep(200 * time.Millisecond)
		if pods := h.podsOf("web"); len(pods) != i+1 {
			t.Fatalf("created %s before %s was ready", names(pods), want)
		}
		p := h.podsOf("web")[i]
		if p.Labels[appsv1.StatefulSetPodNameLabel] != want || p.Labels[appsv1.PodIndexLabel] != fmt.Sprint(i) ||
			p.Labels[appsv1.StatefulSetRevisionLabel] == "" || p.Spec.Hostname != want || p.Spec.Subdomain != "web-svc" ||
			p.Annotations["note"] != "v1" {
			t.Fatalf("pod %s: labels %v hostname %q subdomain %q annotations %v", want, p.Labels, p.Spec.Hostname, p.Spec.Subdomain, p.Annotations)
		}
		ref := metav1.GetControllerOf(p)
		if ref == nil || ref.UID != set.UID || ref.Kind != "StatefulSet" {
			t.Fatalf("pod %s controller %+v", want, ref)
		}
		if err := h.setPodStatus(want, corev1.PodRunning, true); err != nil {
			t.Fatal(err)
		}
	}
	got := h.settle("web")
	if got.Status.AvailableReplicas != 3 || got.Status.CollisionCount == nil || *got.Status.CollisionCount != 0 {
		t.Fatalf("status %+v", got.Status)
	}
	rev := got.Status.UpdateRevision
	for _, p := range h.podsOf("web") {
		if p.Labels[appsv1.StatefulSetRevisionLabel] != rev {
			t.Fatalf("pod %s at %s, want %s", p.Name, p.Labels[appsv1.StatefulSetRevisionLabel], rev)
		}
	}

	// Scale down to 1: web-2 goes first, then web-1. An unready web-0
	// halts the scale-down: only the first unhealthy... web-0 is not
	// condemned, so nothing is deleted while it is unready.
	if err := h.setPodStatus("web-0", corev1.PodRunning, false); err != nil {
		t.Fatal(err)
	}
	h.eventually("web-0 seen unready", func() error {
		s, _ := h.sets.Get(context.Background(), "web", metav1.GetOptions{})
		if s.Status.ReadyReplicas != 2 {
			return fmt.Errorf("ready %d", s.Status.ReadyReplicas)
		}
		return nil
	})
	h.scale("web", 1)
	time.Sleep(300 * time.Millisecond)
	if pods := h.podsOf("web"); len(pods) != 3 {
		t.Fatalf("scaled down to %s while web-0 was unready", names(pods))
	}
	if err := h.setPodStatus("web-0", corev1.PodRunning, true); err != nil {
		t.Fatal(err)
	}
	h.eventually("scaled to 1", func() error {
		if pods := h.podsOf("web"); names(pods) != "web-0" {
			return fmt.Errorf("pods %s", names(pods))
		}
		return nil
	})
	ev := h.eventMessages("web")
	for _, want := range []string{"Create Pod web-0 in StatefulSet web successful", "Create Pod web-2 in StatefulSet web successful"} {
		if !slices.Contains(ev["SuccessfulCreate"], want) {
			t.Fatalf("no SuccessfulCreate %q in %v", want, ev)
		}
	}
	if !slices.Contains(ev["SuccessfulDelete"], "Delete Pod web-2 in StatefulSet web successful") {
		t.Fatalf("no SuccessfulDelete of web-2 in %v", ev)
	}
}

// parallelAndOrdinalsStart: Parallel creates every pod at once, from
// spec.ordinals.start; a failed pod is deleted and recreated.
func parallelAndOrdinalsStart(t *testing.T, h *harness) {
	set := newSet("par", 4, appsv1.ParallelPodManagement)
	set.Spec.Ordinals = &appsv1.StatefulSetOrdinals{Start: 5}
	h.create(set)
	h.eventually("4 pods at once", func() error {
		if got := names(h.podsOf("par")); got != "par-5,par-6,par-7,par-8" {
			return fmt.Errorf("pods %s", got)
		}
		return nil
	})
	if p := h.podsOf("par")[0]; p.Labels[appsv1.PodIndexLabel] != "5" {
		t.Fatalf("pod-index %q", p.Labels[appsv1.PodIndexLabel])
	}
	h.settle("par")
	old := h.podsOf("par")[1]
	if err := h.setPodStatus(old.Name, corev1.PodFailed, false); err != nil {
		t.Fatal(err)
	}
	h.eventually("failed pod recreated", func() error {
		p := h.podsOf("par")[1]
		if p.UID == old.UID {
			return fmt.Errorf("still the failed pod")
		}
		return nil
	})
	h.settle("par")
}

// TestRollingUpdatePartitionHistoryRollback: a template change rolls from
// the highest ordinal down to the partition, one pod at a time; moving the
// partition to 0 finishes it; the revisions are named and numbered as
// kubectl expects; going back to the first template renumbers its revision
// instead of creating one; revisionHistoryLimit prunes unused revisions;
// under OnDelete a template change waits for pods to be deleted.
func TestRollingUpdatePartitionHistoryRollback(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	set := newSet("ru", 3, appsv1.OrderedReadyPodManagement)
	two := int32(2)
	set.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType,
		RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: &two}}
	h.create(set)
	rev1 := h.settle("ru").Status.CurrentRevision
	h.setImage("ru", "img:2")
	var rev2 string
	h.eventually("ru-2 updated, others not", func() error {
		h.readyAll("ru")
		s, err := h.sets.Get(context.Background(), "ru", metav1.GetOptions{})
		if err != nil {
			return err
		}
		rev2 = s.Status.UpdateRevision
		pods := h.podsOf("ru")
		if len(pods) != 3 || rev2 == rev1 || s.Status.UpdatedReplicas != 1 || s.Status.CurrentReplicas != 2 || s.Status.ReadyReplicas != 3 {
			return fmt.Errorf("pods %s, status %+v", names(pods), s.Status)
		}
		for i, p := range pods {
			want := rev1
			if i == 2 {
				want = rev2
			}
			if podRevision(p) != want {
				return fmt.Errorf("%s at %s", p.Name, podRevision(p))
			}
		}
		if pods[2].Spec.Containers[0].Image != "img:2" || pods[0].Spec.Containers[0].Image != "img:1" {
			return fmt.Errorf("images %s %s", pods[0].Spec.Containers[0].Image, pods[2].Spec.Containers[0].Image)
		}
		return nil
	})
	if s, _ := h.sets.Get(context.Background(), "ru", metav1.GetOptions{}); s.Status.CurrentRevision != rev1 {
		t.Fatalf("current revision %s during a partitioned rollout, want %s", s.Status.CurrentRevision, rev1)
	}
	zero := int32(0)
	h.mutate("ru", func(s *appsv1.StatefulSet) { s.Spec.UpdateStrategy.RollingUpdate.Partition = &zero })
	if s := h.settle("ru"); s.Status.CurrentRevision != rev2 {
		t.Fatalf("current revision %s, want %s", s.Status.CurrentRevision, rev2)
	}
	revs, err := h.revs.List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	numbers := map[string]int64{}
	for _, r := range revs.Items {
		numbers[r.Name] = r.Revision
		if r.Labels["app"] != "ru" || r.Labels["controller.kubernetes.io/hash"] == "" || metav1.GetControllerOf(&r) == nil {
			t.Fatalf("revision %s: labels %v", r.Name, r.Labels)
		}
	}
	if numbers[rev1] != 1 || numbers[rev2] != 2 || len(numbers) != 2 {
		t.Fatalf("revisions %v", numbers)
	}
	// Roll back: the first template again.
	h.setImage("ru", "img:1")
	if s := h.settle("ru"); s.Status.CurrentRevision != rev1 {
		t.Fatalf("after rollback current revision %s, want %s", s.Status.CurrentRevision, rev1)
	}
	r1, err := h.revs.Get(context.Background(), rev1, metav1.GetOptions{})
	if err != nil || r1.Revision != 3 {
		t.Fatalf("rolled-back revision: %v, number %d", err, r1.Revision)
	}
	// History limit 0: the unused revision 2 goes.
	h.mutate("ru", func(s *appsv1.StatefulSet) { zero := int32(0); s.Spec.RevisionHistoryLimit = &zero })
	h.eventually("history truncated", func() error {
		if _, err := h.revs.Get(context.Background(), rev2, metav1.GetOptions{}); err == nil {
			return fmt.Errorf("%s still there", rev2)
		}
		return nil
	})

	// OnDelete: a template change replaces nothing until a pod is deleted.
	h.mutate("ru", func(s *appsv1.StatefulSet) {
		s.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType}
	})
	h.settle("ru")
	before := h.podsOf("ru")
	h.setImage("ru", "img:3")
	time.Sleep(500 * time.Millisecond)
	h.readyAll("ru")
	if after := h.podsOf("ru"); after[1].UID != before[1].UID || after[2].UID != before[2].UID {
		t.Fatal("OnDelete replaced a pod")
	}
	if err := h.pods.Delete(context.Background(), "ru-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	h.eventually("ru-1 at the update revision", func() error {
		h.readyAll("ru")
		s, _ := h.sets.Get(context.Background(), "ru", metav1.GetOptions{})
		pods := h.podsOf("ru")
		if len(pods) != 3 || podRevision(pods[1]) != s.Status.UpdateRevision || pods[1].Spec.Containers[0].Image != "img:3" ||
			podRevision(pods[2]) == s.Status.UpdateRevision || s.Status.UpdatedReplicas != 1 {
			return fmt.Errorf("pods %s status %+v", names(pods), s.Status)
		}
		return nil
	})
}

// TestParallel: Parallel pod management with ordinals.start and failed
// pods (parallelAndOrdinalsStart); with maxUnavailable 2 a rollout deletes
// two pods at once; availability waits for minReadySeconds on the injected
// clock.
func TestParallel(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	parallelAndOrdinalsStart(t, h)
	set := newSet("mu", 4, appsv1.ParallelPodManagement)
	mu := intstr.FromInt32(2)
	set.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType,
		RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{MaxUnavailable: &mu}}
	set.Spec.MinReadySeconds = 30
	h.create(set)
	h.eventually("4 pods", func() error {
		if n := len(h.podsOf("mu")); n != 4 {
			return fmt.Errorf("%d pods", n)
		}
		return nil
	})
	h.readyAll("mu")
	h.eventually("ready but not available", func() error {
		s, _ := h.sets.Get(context.Background(), "mu", metav1.GetOptions{})
		if s.Status.ReadyReplicas != 4 || s.Status.AvailableReplicas != 0 {
			return fmt.Errorf("status %+v", s.Status)
		}
		return nil
	})
	h.clock.Step(31 * time.Second)
	h.poke("mu")
	h.eventually("available", func() error {
		s, _ := h.sets.Get(context.Background(), "mu", metav1.GetOptions{})
		if s.Status.AvailableReplicas != 4 {
			return fmt.Errorf("status %+v", s.Status)
		}
		return nil
	})
	before := h.podsOf("mu")
	h.setImage("mu", "img:2")
	h.eventually("two pods replaced at once", func() error {
		pods := h.podsOf("mu")
		replaced := 0
		for i, p := range pods {
			if i < len(before) && p.UID != before[i].UID {
				replaced++
			}
		}
		if replaced != 2 || pods[0].UID != before[0].UID || pods[1].UID != before[1].UID {
			return fmt.Errorf("%d replaced", replaced)
		}
		return nil
	})
	// The new pods are not available until minReadySeconds pass: the
	// rollout waits.
	h.readyAll("mu")
	time.Sleep(300 * time.Millisecond)
	if pods := h.podsOf("mu"); pods[0].UID != before[0].UID || pods[1].UID != before[1].UID {
		t.Fatal("rolled on before the new pods were available")
	}
	h.clock.Step(31 * time.Second)
	h.poke("mu")
	h.eventually("rest replaced", func() error {
		h.readyAll("mu")
		h.clock.Step(31 * time.Second)
		h.poke("mu")
		s, _ := h.sets.Get(context.Background(), "mu", metav1.GetOptions{})
		if s.Status.UpdatedReplicas != 4 || s.Status.AvailableReplicas != 4 || s.Status.CurrentRevision != s.Status.UpdateRevision {
			return fmt.Errorf("status %+v", s.Status)
		}
		return nil
	})
}
