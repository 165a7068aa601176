package daemonset

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/setpoint-dev/setpoint/internal/controllers/podutil"
)

// watcher samples, every few milliseconds until stopped, the pods of a
// DaemonSet on the given nodes, and records the most nodes seen at once
// without an available (live and ready) pod and the most live pods.
type watcher struct {
	mu                      sync.Mutex
	maxUnavailable, maxPods int
	samples                 int
	stop                    func()
}

func (h *harness) watch(ds *appsv1.DaemonSet, nodes []string) *watcher {
	w := &watcher{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			list, err := h.pods.List(ctx, metav1.ListOptions{})
			if err == nil {
				var pods []*corev1.Pod
				for i := range list.Items {
					p := &list.Items[i]
					if ref := metav1.GetControllerOf(p); ref != nil && ref.UID == ds.UID && p.DeletionTimestamp == nil {
						pods = append(pods, p)
					}
				}
				byNode := podsByNode(pods)
				unavailable := 0
				for _, n := range nodes {
					ok := false
					for _, p := range byNode[n] {
						ok = ok || (p.Spec.NodeName == n && podutil.IsPodAvailable(p, ds.Spec.MinReadySeconds, metav1.NewTime(h.clock.Now())))
					}
					if !ok {
						unavailable++
					}
				}
				w.mu.Lock()
				w.samples++
				w.maxUnavailable = max(w.maxUnavailable, unavailable)
				w.maxPods = max(w.maxPods, len(pods))
				w.mu.Unlock()
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	w.stop = func() { cancel(); <-done }
	return w
}

func (w *watcher) result() (maxUnavailable, maxPods, samples int) {
	w.stop()
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.maxUnavailable, w.maxPods, w.samples
}

func setImage(image string) func(*appsv1.DaemonSet) {
	return func(ds *appsv1.DaemonSet) { ds.Spec.Template.Spec.Containers[0].Image = image }
}

// TestRollingUpdateAndUndo: a rolling update with maxUnavailable 2 over
// five nodes never has more than two nodes without an available pod (a
// watch samples throughout), ends with every pod updated and two
// revisions; the undo that kubectl does (the old revision's data as a
// strategic merge patch) rolls back and renumbers that revision 3.
func TestRollingUpdateAndUndo(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := context.Background()
	nodes := []string{"n0", "n1", "n2", "n3", "n4"}
	for _, n := range nodes {
		h.addNode(n, nil)
	}
	ds := newDS("roll")
	two := intstr.FromInt32(2)
	ds.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable = &two
	ds = h.create(ds)
	h.waitSettled("roll", nodes...)

	w := h.watch(ds, nodes)
	h.mutate("roll", setImage("img:2"))
	h.waitSettled("roll", nodes...)
	maxUnavailable, maxPods, samples := w.result()
	t.Logf("rollout: %d samples, at most %d nodes unavailable, %d pods", samples, maxUnavailable, maxPods)
	if maxUnavailable > 2 || maxPods > len(nodes) {
		t.Fatalf("at most 2 unavailable nodes and %d pods allowed: saw %d and %d", len(nodes), maxUnavailable, maxPods)
	}
	for _, p := range h.livePods(ds) {
		if p.Spec.Containers[0].Image != "img:2" || p.Labels[templateGenerationLabel] != "2" {
			t.Fatalf("pod %s: image %s, labels %v", p.Name, p.Spec.Containers[0].Image, p.Labels)
		}
	}
	revs := h.revisions(2)
	first := revs[0]

	// kubectl rollout undo --to-revision=1.
	if _, err := h.dss.Patch(ctx, "roll", types.StrategicMergePatchType, first.Data.Raw, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	h.waitSettled("roll", nodes...)
	revs = h.revisions(2)
	if revs[1].Name != first.Name || revs[1].Revision != 3 || revs[0].Revision != 2 {
		t.Fatalf("after undo: %s=%d, %s=%d", revs[0].Name, revs[0].Revision, revs[1].Name, revs[1].Revision)
	}
	for _, p := range h.livePods(ds) {
		if p.Spec.Containers[0].Image != "img:1" || p.Labels[hashLabel] != first.Labels[hashLabel] {
			t.Fatalf("pod %s after undo: %s %v", p.Name, p.Spec.Containers[0].Image, p.Labels)
		}
	}

	// revisionHistoryLimit 0: the old revision, which no pod runs, goes.
	h.mutate("roll", func(ds *appsv1.DaemonSet) { ds.Spec.RevisionHistoryLimit = new(int32) })
	h.eventually("old revision pruned", func() error {
		list, err := h.crs.List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		if len(list.Items) != 1 || list.Items[0].Name != first.Name {
			return fmt.Errorf("%d revisions", len(list.Items))
		}
		return nil
	})
}

// revisions waits for n revisions of the test's namespace and returns them
// oldest first.
func (h *harness) revisions(n int) []*appsv1.ControllerRevision {
	h.t.Helper()
	var out []*appsv1.ControllerRevision
	h.eventually(fmt.Sprintf("%d revisions", n), func() error {
		list, err := h.crs.List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return err
		}
		out = out[:0]
		for i := range list.Items {
			out = append(out, &list.Items[i])
		}
		if len(out) != n {
			return fmt.Errorf("%d revisions", len(out))
		}
		return nil
	})
	if out[0].Revision > out[1].Revision {
		out[0], out[1] = out[1], out[0]
	}
	return out
}

// TestSurgeRollout: with maxSurge 1 and maxUnavailable 0 every node keeps
// an available pod throughout (minReadySeconds on the fake clock), and
// there are never more than nodes+1 pods.
func TestSurgeRollout(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	nodes := []string{"n0", "n1", "n2"}
	for _, n := range nodes {
		h.addNode(n, nil)
	}
	ds := newDS("surge")
	one, zero := intstr.FromInt32(1), intstr.FromInt32(0)
	ds.Spec.UpdateStrategy.RollingUpdate = &appsv1.RollingUpdateDaemonSet{MaxSurge: &one, MaxUnavailable: &zero}
	ds.Spec.MinReadySeconds = 5
	ds = h.create(ds)
	h.eventually("pods ready", func() error {
		cur, err := h.dss.Get(context.Background(), "surge", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if cur.Status.NumberReady != 3 {
			return fmt.Errorf("status %+v", cur.Status)
		}
		return nil
	})
	h.clock.Step(6 * time.Second)
	h.waitSettled("surge", nodes...)

	w := h.watch(ds, nodes)
	h.mutate("surge", setImage("img:2"))
	// Each node's new pod becomes available 5 fake seconds after it is
	// ready: step the clock until the rollout is done.
	h.eventually("rollout done", func() error {
		h.clock.Step(2 * time.Second)
		cur, err := h.dss.Get(context.Background(), "surge", metav1.GetOptions{})
		if err != nil {
			return err
		}
		st := cur.Status
		if st.ObservedGeneration != cur.Generation || st.UpdatedNumberScheduled != 3 || st.NumberAvailable != 3 || len(h.livePods(ds)) != 3 {
			return fmt.Errorf("status %+v", st)
		}
		return nil
	})
	maxUnavailable, maxPods, samples := w.result()
	t.Logf("surge rollout: %d samples, at most %d nodes unavailable, %d pods", samples, maxUnavailable, maxPods)
	if maxUnavailable != 0 || maxPods > 4 {
		t.Fatalf("saw %d unavailable nodes and %d pods", maxUnavailable, maxPods)
	}
	h.waitSettled("surge", nodes...)
}

// TestOnDelete: a template change replaces nothing by itself; a deleted
// pod comes back with the new template.
func TestOnDelete(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.addNode("n0", nil)
	h.addNode("n1", nil)
	ds := newDS("ondelete")
	ds.Spec.UpdateStrategy = appsv1.DaemonSetUpdateStrategy{Type: appsv1.OnDeleteDaemonSetStrategyType}
	ds = h.create(ds)
	h.waitSettled("ondelete", "n0", "n1")
	h.mutate("ondelete", setImage("img:2"))
	h.eventually("status of generation 2", func() error {
		cur, err := h.dss.Get(context.Background(), "ondelete", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if cur.Status.ObservedGeneration != 2 || cur.Status.UpdatedNumberScheduled != 0 {
			return fmt.Errorf("status %+v", cur.Status)
		}
		return nil
	})
	time.Sleep(200 * time.Millisecond)
	pods := h.livePods(ds)
	if len(pods) != 2 || pods[0].Spec.Containers[0].Image != "img:1" || pods[1].Spec.Containers[0].Image != "img:1" {
		t.Fatal("OnDelete replaced pods by itself")
	}
	if err := h.pods.Delete(context.Background(), pods[0].Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	h.eventually("one pod updated", func() error {
		cur, err := h.dss.Get(context.Background(), "ondelete", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if cur.Status.UpdatedNumberScheduled != 1 || cur.Status.NumberReady != 2 {
			return fmt.Errorf("status %+v", cur.Status)
		}
		return nil
	})
}
