package daemonset

import (
	"context"
	"fmt"
	"sort"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/controllers/podutil"
)

// counts are the numbers a DaemonSet's status reports.
type counts struct {
	desired, current, misscheduled, ready, updated, available int32
}

// calculateCounts counts, over nodes: those that should run the daemon
// (desired), those of them with a daemon pod (current), those that should
// not but have one (misscheduled); and, of each desired node's oldest pod,
// whether it is ready, available (minReadySeconds at now) and of the
// current template.
func calculateCounts(ds *appsv1.DaemonSet, nodes []*corev1.Node, byNode map[string][]*corev1.Pod, hash string, now time.Time) counts {
	var c counts
	mnow := metav1.NewTime(now)
	for _, node := range nodes {
		run, _ := nodeShouldRun(node, ds)
		pods := byNode[node.Name]
		if !run {
			if len(pods) > 0 {
				c.misscheduled++
			}
			continue
		}
		c.desired++
		if len(pods) == 0 {
			continue
		}
		c.current++
		sorted := append([]*corev1.Pod(nil), pods...)
		sortByAge(sorted)
		p := sorted[0]
		if podutil.IsPodReady(p) {
			c.ready++
			if podutil.IsPodAvailable(p, ds.Spec.MinReadySeconds, mnow) {
				c.available++
			}
		}
		if isPodUpdated(ds, p, hash) {
			c.updated++
		}
	}
	return c
}

// syncStatus computes ds's status from the cache and writes it through
// the status subresource if it changed (observedGeneration too when
// withGeneration). While some ready pods are not yet available, ds is
// queued again for when the first becomes so.
func (r *reconciler) syncStatus(ctx context.Context, ds *appsv1.DaemonSet, nodes []*corev1.Node, hash string, withGeneration bool) error {
	pods, err := r.daemonPods(ctx, ds)
	if err != nil {
		return err
	}
	byNode := nodeToPods(pods, false)
	now := r.clock.Now()
	c := calculateCounts(ds, nodes, byNode, hash, now)
	if d := nextAvailable(pods, ds.Spec.MinReadySeconds, now); d > 0 {
		r.later.after(request(ds.Namespace, ds.Name), d)
	}
	st := ds.Status
	st.DesiredNumberScheduled = c.desired
	st.CurrentNumberScheduled = c.current
	st.NumberMisscheduled = c.misscheduled
	st.NumberReady = c.ready
	st.UpdatedNumberScheduled = c.updated
	st.NumberAvailable = c.available
	st.NumberUnavailable = c.desired - c.available
	if withGeneration {
		st.ObservedGeneration = ds.Generation
	}
	if statusEqual(ds.Status, st) {
		return nil
	}
	cp := ds.DeepCopy()
	cp.Status = st
	if _, err := r.dss.Namespace(ds.Namespace).UpdateStatus(ctx, cp, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("update status of daemonset %s: %w", keyOf(ds), err)
	}
	return nil
}

// statusEqual compares the fields the controller writes.
func statusEqual(a, b appsv1.DaemonSetStatus) bool {
	return a.DesiredNumberScheduled == b.DesiredNumberScheduled &&
		a.CurrentNumberScheduled == b.CurrentNumberScheduled &&
		a.NumberMisscheduled == b.NumberMisscheduled &&
		a.NumberReady == b.NumberReady &&
		a.UpdatedNumberScheduled == b.UpdatedNumberScheduled &&
		a.NumberAvailable == b.NumberAvailable &&
		a.NumberUnavailable == b.NumberUnavailable &&
		a.ObservedGeneration == b.ObservedGeneration
}

// nextAvailable returns how long until the first ready but not yet
// available pod becomes available, or 0 if there is none.
func nextAvailable(pods []*corev1.Pod, minReady int32, now time.Time) time.Duration {
	if minReady <= 0 {
		return 0
	}
	var next time.Duration
	for _, p := range pods {
		at, ready := podutil.AvailableAt(p, minReady)
		if !ready || !at.After(now) || p.DeletionTimestamp != nil {
			continue
		}
		if d := at.Sub(now); next == 0 || d < next {
			next = d
		}
	}
	if next > 0 {
		// Wake just after the boundary so the pod counts as available.
		next += 10 * time.Millisecond
	}
	return next
}

func sortedKeys(m map[string][]*corev1.Pod) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
