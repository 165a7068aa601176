package podgc

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
)

// Reasons, the metrics' reason label.
const (
	reasonTerminated   = "terminated"
	reasonOutOfService = "out-of-service"
	reasonOrphaned     = "orphaned"
	reasonUnscheduled  = "unscheduled"
)

// isTerminated: the phase is neither Pending, Running nor Unknown.
func isTerminated(p *corev1.Pod) bool {
	switch p.Status.Phase {
	case corev1.PodPending, corev1.PodRunning, corev1.PodUnknown:
		return false
	}
	return true
}

func isEvicted(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodFailed && p.Status.Reason == "Evicted"
}

// byEvictionThenAge orders evicted pods first, then by creationTimestamp,
// then by name.
func byEvictionThenAge(a, b *corev1.Pod) int {
	if ea, eb := isEvicted(a), isEvicted(b); ea != eb {
		if ea {
			return -1
		}
		return 1
	}
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		if a.CreationTimestamp.Before(&b.CreationTimestamp) {
			return -1
		}
		return 1
	}
	switch {
	case a.Name < b.Name:
		return -1
	case a.Name > b.Name:
		return 1
	}
	return 0
}

func (gc *Collector) gcTerminated(ctx context.Context, pods []*corev1.Pod) {
	var terminated []*corev1.Pod
	for _, p := range pods {
		if isTerminated(p) {
			terminated = append(terminated, p)
		}
	}
	n := len(terminated) - gc.opts.TerminatedPodThreshold
	if n <= 0 {
		return
	}
	gc.log.Info("garbage collecting pods", "numPods", n)
	slices.SortFunc(terminated, byEvictionThenAge)
	gc.deleteAll(ctx, terminated[:n], reasonTerminated, nil)
}

// gcOutOfService deletes terminating pods on nodes that are not Ready and
// carry the out-of-service taint.
func (gc *Collector) gcOutOfService(ctx context.Context, pods []*corev1.Pod) {
	var victims []*corev1.Pod
	for _, p := range pods {
		if p.DeletionTimestamp == nil || p.Spec.NodeName == "" {
			continue
		}
		node, err := gc.nodeInf.Lister().Get(p.Spec.NodeName)
		if err != nil {
			continue
		}
		if !nodeReady(node) && slices.ContainsFunc(node.Spec.Taints, func(t corev1.Taint) bool {
			return t.Key == corev1.TaintNodeOutOfService
		}) {
			victims = append(victims, p)
		}
	}
	if len(victims) == 0 {
		return
	}
	gc.log.Info("garbage collecting pods that are terminating on node tainted with node.kubernetes.io/out-of-service", "numPods", len(victims))
	slices.SortFunc(victims, byEvictionThenAge)
	gc.deleteAll(ctx, victims, reasonOutOfService, nil)
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// gcOrphaned deletes the pods of nodes that stayed missing through the
// quarantine and that the server confirms are gone.
func (gc *Collector) gcOrphaned(ctx context.Context, pods []*corev1.Pod, nodes []*corev1.Node) {
	existing := sets.New[string]()
	for _, n := range nodes {
		existing.Insert(n.Name)
	}
	now := gc.opts.Clock.Now()
	for _, p := range pods {
		if name := p.Spec.NodeName; name != "" && !existing.Has(name) {
			if _, ok := gc.quarantine[name]; !ok {
				gc.quarantine[name] = now
			}
		}
	}
	deleted := sets.New[string]()
	for name, since := range gc.quarantine {
		if now.Sub(since) < gc.opts.QuarantineTime {
			continue
		}
		delete(gc.quarantine, name)
		if existing.Has(name) {
			continue
		}
		_, err := gc.nodes.Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			deleted.Insert(name)
		case err != nil:
			gc.log.Error("get node", "node", name, "err", err)
		}
	}
	if deleted.Len() == 0 {
		return
	}
	var orphans []*corev1.Pod
	for _, p := range pods {
		if deleted.Has(p.Spec.NodeName) {
			gc.log.Info("found orphaned pod assigned to the node, deleting", "pod", p.Namespace+"/"+p.Name, "node", p.Spec.NodeName)
			orphans = append(orphans, p)
		}
	}
	cond := &corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
		Reason: "DeletionByPodGC", Message: "PodGC: node no longer exists"}
	gc.deleteAll(ctx, orphans, reasonOrphaned, cond)
}

// gcUnscheduledTerminating deletes terminating pods never bound to a node.
func (gc *Collector) gcUnscheduledTerminating(ctx context.Context, pods []*corev1.Pod) {
	var victims []*corev1.Pod
	for _, p := range pods {
		if p.DeletionTimestamp != nil && p.Spec.NodeName == "" {
			gc.log.Info("found unscheduled terminating pod not assigned to any node, deleting", "pod", p.Namespace+"/"+p.Name)
			victims = append(victims, p)
		}
	}
	gc.deleteAll(ctx, victims, reasonUnscheduled, nil)
}

// deleteAll marks each pod Failed (with cond, if any) and force-deletes
// it, ParallelDeletes at a time, counting each in the metrics.
func (gc *Collector) deleteAll(ctx context.Context, pods []*corev1.Pod, reason string, cond *corev1.PodCondition) {
	slots := make(chan struct{}, gc.opts.ParallelDeletes)
	var wg sync.WaitGroup
	for _, p := range pods {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			wg.Wait()
			return
		}
		wg.Go(func() {
			defer func() { <-slots }()
			gc.metrics.deleted.WithLabelValues(p.Namespace, reason).Inc()
			if err := gc.markFailedAndDelete(ctx, p, cond); err != nil {
				gc.metrics.errors.WithLabelValues(p.Namespace, reason).Inc()
				gc.log.Error("force delete pod", "pod", p.Namespace+"/"+p.Name, "reason", reason, "err", err)
			}
		})
	}
	wg.Wait()
}

// markFailedAndDelete sets an unfinished pod's phase to Failed (adding
// cond) and deletes it with grace period 0.
func (gc *Collector) markFailedAndDelete(ctx context.Context, p *corev1.Pod, cond *corev1.PodCondition) error {
	gc.log.Info("PodGC is force deleting Pod", "pod", p.Namespace+"/"+p.Name)
	pods := gc.pods.Namespace(p.Namespace)
	if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
		patch, err := failedPatch(p, cond, gc.opts.Clock.Now())
		if err != nil {
			return err
		}
		if _, err := pods.Patch(ctx, p.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
			if apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("mark pod %s/%s failed: %w", p.Namespace, p.Name, err)
		}
	}
	err := pods.Delete(ctx, p.Name, *metav1.NewDeleteOptions(0))
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete pod %s/%s: %w", p.Namespace, p.Name, err)
	}
	return nil
}

// failedPatch is the strategic merge patch of pod status that sets phase
// Failed and, if cond is set, that condition (merged by type), with the
// pod's UID as precondition.
func failedPatch(p *corev1.Pod, cond *corev1.PodCondition, now time.Time) ([]byte, error) {
	status := map[string]any{"phase": corev1.PodFailed}
	if cond != nil {
		c := cond.DeepCopy()
		c.LastTransitionTime = metav1.NewTime(now)
		c.ObservedGeneration = p.Generation
		status["conditions"] = []any{c}
	}
	b, err := json.Marshal(map[string]any{"metadata": map[string]any{"uid": p.UID}, "status": status})
	if err != nil {
		return nil, fmt.Errorf("pod status patch: %w", err)
	}
	return b, nil
}
