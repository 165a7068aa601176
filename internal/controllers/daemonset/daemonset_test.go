package daemonset

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// TestPlacement: pods go exactly to the nodes that match the nodeSelector
// and whose taints are tolerated (the daemon tolerations included), each
// carrying the node-name affinity, the daemon tolerations and the revision
// labels; a new node gets its pod; a node that stops matching loses it; a
// NoSchedule taint leaves the pod but counts it misscheduled.
func TestPlacement(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := context.Background()
	h.addNode("plain", map[string]string{"role": "worker"})
	h.addNode("other", map[string]string{"role": "db"})
	h.addNode("tainted", map[string]string{"role": "worker"}, corev1.Taint{Key: "dedicated", Value: "x", Effect: corev1.TaintEffectNoSchedule})
	h.addNode("notready", map[string]string{"role": "worker"}, corev1.Taint{Key: taintNotReady, Effect: corev1.TaintEffectNoExecute})
	h.addNode("cordoned", map[string]string{"role": "worker"}, corev1.Taint{Key: taintUnschedulable, Effect: corev1.TaintEffectNoSchedule})
	ds := newDS("agent")
	ds.Spec.Template.Spec.NodeSelector = map[string]string{"role": "worker"}
	ds.Spec.Template.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "role", Operator: corev1.NodeSelectorOpExists}},
		}}},
		PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{Weight: 1,
			Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "fast", Operator: corev1.NodeSelectorOpExists}}}}},
	}}
	ds = h.create(ds)
	got := h.waitSettled("agent", "cordoned", "notready", "plain")

	revs, err := h.crs.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(revs.Items) != 1 || revs.Items[0].Revision != 1 {
		t.Fatalf("revisions: %+v", revs.Items)
	}
	hash := revs.Items[0].Labels[hashLabel]
	if revs.Items[0].Name != "agent-"+hash || hash == "" {
		t.Fatalf("revision %s with hash %q", revs.Items[0].Name, hash)
	}
	for _, p := range h.livePods(ds) {
		if p.Labels[hashLabel] != hash || p.Labels[templateGenerationLabel] != "1" {
			t.Errorf("pod %s labels %v", p.Name, p.Labels)
		}
		na := p.Spec.Affinity.NodeAffinity
		req := na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
		if len(req) != 1 || len(req[0].MatchExpressions) != 0 || req[0].MatchFields[0].Key != "metadata.name" ||
			req[0].MatchFields[0].Values[0] != p.Spec.NodeName || len(na.PreferredDuringSchedulingIgnoredDuringExecution) != 1 {
			t.Errorf("pod %s affinity %+v", p.Name, na)
		}
		if !hasToleration(p, taintNotReady, corev1.TaintEffectNoExecute) || !hasToleration(p, taintPIDPressure, corev1.TaintEffectNoSchedule) ||
			hasToleration(p, taintNetworkUnavailable, corev1.TaintEffectNoSchedule) || len(p.Spec.Tolerations) != 6 {
			t.Errorf("pod %s tolerations %+v", p.Name, p.Spec.Tolerations)
		}
		if ref := metav1.GetControllerOf(p); ref == nil || ref.Kind != "DaemonSet" || ref.Name != "agent" {
			t.Errorf("pod %s controller %+v", p.Name, ref)
		}
	}
	if got.Status.DesiredNumberScheduled != 3 {
		t.Fatalf("status %+v", got.Status)
	}

	h.addNode("late", map[string]string{"role": "worker"})
	h.waitSettled("agent", "cordoned", "late", "notready", "plain")
	h.mutateNode("plain", func(n *corev1.Node) { n.Labels["role"] = "db" })
	h.waitSettled("agent", "cordoned", "late", "notready")

	// A NoSchedule taint: the pod stays but no longer should run there.
	h.mutateNode("late", func(n *corev1.Node) {
		n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: "gpu", Effect: corev1.TaintEffectNoSchedule})
	})
	h.eventually("misscheduled", func() error {
		cur, err := h.dss.Get(ctx, "agent", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if cur.Status.NumberMisscheduled != 1 || cur.Status.DesiredNumberScheduled != 2 || len(h.livePods(ds)) != 3 {
			return fmt.Errorf("status %+v, %d pods", cur.Status, len(h.livePods(ds)))
		}
		return nil
	})
	// A NoExecute taint: the pod goes.
	h.mutateNode("late", func(n *corev1.Node) {
		n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: "evict", Effect: corev1.TaintEffectNoExecute})
	})
	h.waitSettled("agent", "cordoned", "notready")
	h.eventually("events", func() error {
		if r := h.eventReasons("agent"); r[ReasonSuccessfulCreate] != 4 || r[ReasonSuccessfulDelete] != 2 {
			return fmt.Errorf("events %v", r)
		}
		return nil
	})
}

func hasToleration(p *corev1.Pod, key string, effect corev1.TaintEffect) bool {
	for _, tol := range p.Spec.Tolerations {
		if tol.Key == key && tol.Effect == effect && tol.Operator == corev1.TolerationOpExists && tol.TolerationSeconds == nil {
			return true
		}
	}
	return false
}

// TestFailedPodsBackoff: a failed daemon pod is deleted and replaced with a
// FailedDaemonPod warning; a second failure on the node within the back-off
// waits until the (fake) clock passes it.
func TestFailedPodsBackoff(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.addNode("n0", nil)
	ds := h.create(newDS("fail"))
	h.waitSettled("fail", "n0")
	first := h.livePods(ds)[0].Name
	h.setPhase(first, corev1.PodFailed)
	var second string
	h.eventually("replaced", func() error {
		pods := h.livePods(ds)
		if len(pods) != 1 || pods[0].Name == first {
			return fmt.Errorf("%d pods", len(pods))
		}
		second = pods[0].Name
		return nil
	})
	h.waitSettled("fail", "n0")
	// The fake clock has not moved: the node is still within the 1s
	// back-off of the first failure, so the second failed pod stays.
	h.setPhase(second, corev1.PodFailed)
	h.eventually("failed pod kept during back-off", func() error {
		cur, err := h.dss.Get(context.Background(), "fail", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if cur.Status.NumberReady != 0 {
			return fmt.Errorf("status %+v", cur.Status)
		}
		return nil
	})
	if pods := h.livePods(ds); len(pods) != 1 || pods[0].Name != second {
		t.Fatalf("the failed pod was not kept during the back-off: %d pods", len(pods))
	}
	h.clock.Step(3 * failedPodsBackoffInitial)
	h.waitSettled("fail", "n0")
	if pods := h.livePods(ds); pods[0].Name == second {
		t.Fatal("the failed pod was not replaced after the back-off")
	}
	h.eventually("events", func() error {
		if r := h.eventReasons("fail"); r[ReasonFailedDaemonPod] != 2 {
			return fmt.Errorf("events %v", r)
		}
		return nil
	})
	msg := ""
	list, _ := h.events.List(context.Background(), metav1.ListOptions{})
	for _, e := range list.Items {
		if e.Reason == ReasonFailedDaemonPod && e.InvolvedObject.Name == "fail" {
			msg = e.Message
		}
	}
	if want := fmt.Sprintf("Found failed daemon pod %s/%s on node n0, will try to kill it", ns, first); msg != want &&
		msg != fmt.Sprintf("Found failed daemon pod %s/%s on node n0, will try to kill it", ns, second) {
		t.Fatalf("message %q", msg)
	}
}

// TestNoDoublePodWhenWatchLags: the controller's pod watch is slowed down
// while the DaemonSet is poked (each update a sync) and nodes join; a
// prompt watch of the test's own sees every pod ever created: exactly one
// per node, although the controller's cache was seen to lag.
func TestNoDoublePodWhenWatchLags(t *testing.T) {
	t.Parallel()
	h := newLaggingHarness(t, 100*time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, err := h.pods.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	created := map[string]bool{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			if p, ok := ev.Object.(*corev1.Pod); ok && ev.Type == watch.Added {
				mu.Lock()
				created[p.Name] = true
				mu.Unlock()
			}
		}
	}()
	defer func() { w.Stop(); <-done }()
	var nodes []string
	for i := range 8 {
		nodes = append(nodes, fmt.Sprintf("n%d", i))
		h.addNode(nodes[i], nil)
	}
	h.slow.Store(true)
	h.create(newDS("lag"))
	lagged := false
	for i := range 16 {
		if i%4 == 3 {
			n := fmt.Sprintf("n%d", len(nodes))
			nodes = append(nodes, n)
			h.addNode(n, nil)
		}
		h.mutate("lag", func(ds *appsv1.DaemonSet) { ds.Annotations = map[string]string{"poke": fmt.Sprint(i)} })
		list, err := h.pods.List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		h.mu.Lock()
		cached := h.run.r.podInf.Indexer().Len()
		h.mu.Unlock()
		lagged = lagged || len(list.Items) > cached
	}
	h.slow.Store(false)
	slices.Sort(nodes)
	h.waitSettled("lag", nodes...)
	if !lagged {
		t.Fatal("the controller's cache never lagged behind the server: the test proves nothing")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(created) != len(nodes) {
		t.Fatalf("%d pods created for %d nodes", len(created), len(nodes))
	}
}

// TestAdoptAndRelease: a running orphan pod matching the selector on a
// node is adopted instead of a new pod being created there; a pod whose
// labels stop matching is released and replaced.
func TestAdoptAndRelease(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := context.Background()
	h.addNode("n0", nil)
	h.addNode("n1", nil)
	orphan := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "orphan", Labels: map[string]string{"app": "adopt"}},
		Spec:       corev1.PodSpec{NodeName: "n0", Containers: []corev1.Container{{Name: "c", Image: "img:1"}}},
	}
	if _, err := h.pods.Create(ctx, orphan, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The orphan must be in the controller's cache before the DaemonSet
	// exists: a sync that does not know of it yet rightly creates a pod on
	// n0, as kube's controller would (and deletes the surplus afterwards).
	h.eventually("orphan in the controller's cache", func() error {
		h.mu.Lock()
		defer h.mu.Unlock()
		if _, ok, _ := h.run.r.podInf.Indexer().GetByKey(ns + "/orphan"); !ok {
			return fmt.Errorf("not yet")
		}
		return nil
	})
	ds := newDS("adopt")
	ds.Spec.UpdateStrategy = appsv1.DaemonSetUpdateStrategy{Type: appsv1.OnDeleteDaemonSetStrategyType}
	ds = h.create(ds)
	h.eventually("adopted, one pod per node", func() error {
		pods := h.livePods(ds)
		if len(pods) != 2 {
			return fmt.Errorf("%d pods", len(pods))
		}
		for _, p := range pods {
			if p.Spec.NodeName == "n0" && p.Name != "orphan" {
				return fmt.Errorf("pod %s created on n0 beside the orphan", p.Name)
			}
		}
		return nil
	})
	h.eventually("one SuccessfulCreate", func() error {
		if r := h.eventReasons("adopt"); r[ReasonSuccessfulCreate] != 1 {
			return fmt.Errorf("events %v", r)
		}
		return nil
	})
	// The relabel retries on a conflict: the controller and the test's
	// kubelet write the pod meanwhile.
	h.eventually("orphan relabelled", func() error {
		p, err := h.pods.Get(ctx, "orphan", metav1.GetOptions{})
		if err != nil {
			return err
		}
		p.Labels["app"] = "gone"
		_, err = h.pods.Update(ctx, p, metav1.UpdateOptions{})
		return err
	})
	h.eventually("released and replaced", func() error {
		p, err := h.pods.Get(ctx, "orphan", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if metav1.GetControllerOf(p) != nil {
			return fmt.Errorf("still controlled")
		}
		if n := len(h.livePods(ds)); n != 2 {
			return fmt.Errorf("%d pods", n)
		}
		return nil
	})
}
