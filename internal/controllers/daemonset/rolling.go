package daemonset

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/setpoint-dev/setpoint/internal/controllers/podutil"
)

// rollingUpdate replaces old daemon pods. Without surge it deletes old
// pods, at most maxUnavailable nodes being without an available pod at
// once (unavailable old pods are replaced regardless), and lets manage
// create the new ones. With surge it creates a new pod next to an old one
// on at most maxSurge nodes at once (at once where the old pod is
// unavailable) and deletes the old pod when the new one is available.
func (r *reconciler) rollingUpdate(ctx context.Context, ds *appsv1.DaemonSet, nodes []*corev1.Node,
	byNode map[string][]*corev1.Pod, hash string) error {
	maxSurge, maxUnavailable, desired, err := desiredNodeCounts(ds, nodes, byNode)
	if err != nil {
		return fmt.Errorf("daemonset %s: %w", keyOf(ds), err)
	}
	now := metav1.NewTime(r.clock.Now())
	if maxSurge == 0 {
		del := r.unavailableRollout(ds, byNode, hash, maxUnavailable, now)
		return r.syncNodes(ctx, ds, del, nil, hash)
	}
	del, create := r.surgeRollout(ds, byNode, hash, maxSurge, desired, now)
	return r.syncNodes(ctx, ds, del, create, hash)
}

// unavailableRollout picks the old pods to delete when not surging.
func (r *reconciler) unavailableRollout(ds *appsv1.DaemonSet, byNode map[string][]*corev1.Pod, hash string,
	maxUnavailable int, now metav1.Time) []*corev1.Pod {
	minReady := ds.Spec.MinReadySeconds
	numUnavailable := 0
	var replace, candidates []*corev1.Pod
	for _, name := range sortedKeys(byNode) {
		newPod, oldPod, ok := updatedPodsOnNode(ds, byNode[name], hash)
		switch {
		case !ok:
			// Excess pods: manage prunes them; the node counts as
			// unavailable meanwhile.
			numUnavailable++
		case (oldPod == nil) == (newPod == nil):
			// Nothing yet, or both: manage creates or deletes.
			numUnavailable++
		case newPod != nil:
			if !podutil.IsPodAvailable(newPod, minReady, now) {
				numUnavailable++
			}
		case !podutil.IsPodAvailable(oldPod, minReady, now):
			// An unavailable old pod costs nothing to replace.
			replace = append(replace, oldPod)
			numUnavailable++
		case numUnavailable < maxUnavailable:
			candidates = append(candidates, oldPod)
		}
	}
	n := min(max(maxUnavailable-numUnavailable, 0), len(candidates))
	return append(replace, candidates[:n]...)
}

// surgeRollout picks the old pods to delete and the nodes to surge onto.
func (r *reconciler) surgeRollout(ds *appsv1.DaemonSet, byNode map[string][]*corev1.Pod, hash string,
	maxSurge, desired int, now metav1.Time) (del []*corev1.Pod, create []string) {
	minReady := ds.Spec.MinReadySeconds
	var shouldNotRun []*corev1.Pod
	var candidates, allowed []string
	numSurge, numAvailable := 0, 0
	for _, name := range sortedKeys(byNode) {
		newPod, oldPod, ok := updatedPodsOnNode(ds, byNode[name], hash)
		if !ok {
			numSurge++
			continue
		}
		switch {
		case oldPod != nil:
			if podutil.IsPodAvailable(oldPod, minReady, now) {
				numAvailable++
			}
		case newPod != nil:
			if podutil.IsPodAvailable(newPod, minReady, now) {
				numAvailable++
			}
		}
		switch {
		case oldPod == nil:
			// manage creates the pod if the node has none.
		case newPod == nil:
			run := r.shouldRunOn(name, ds)
			switch {
			case !podutil.IsPodAvailable(oldPod, minReady, now):
				if !run {
					del = append(del, oldPod)
					continue
				}
				allowed = append(allowed, name)
			case !run:
				shouldNotRun = append(shouldNotRun, oldPod)
			case numSurge < maxSurge:
				candidates = append(candidates, name)
			}
		default:
			if !podutil.IsPodAvailable(newPod, minReady, now) {
				numSurge++
				continue
			}
			del = append(del, oldPod)
		}
	}
	// Surging promises full availability: an old pod on a node the
	// DaemonSet no longer wants goes only once enough pods elsewhere are
	// available.
	if deletable := min(numAvailable-desired, len(shouldNotRun)); deletable > 0 {
		del = append(del, shouldNotRun[:deletable]...)
	}
	n := min(max(maxSurge-numSurge, 0), len(candidates))
	return del, append(allowed, candidates[:n]...)
}

// shouldRunOn reports whether ds wants a pod on the cached node name.
func (r *reconciler) shouldRunOn(name string, ds *appsv1.DaemonSet) bool {
	node, err := r.nodeInf.Lister().Get(name)
	if err != nil {
		return false
	}
	run, _ := nodeShouldRun(node, ds)
	return run
}

// desiredNodeCounts returns maxSurge and maxUnavailable scaled to the
// number of nodes that should run the daemon (also returned), and adds
// those nodes to byNode (with no pods) so that the rollout considers them.
// A configuration allowing neither gets maxUnavailable 1.
func desiredNodeCounts(ds *appsv1.DaemonSet, nodes []*corev1.Node, byNode map[string][]*corev1.Pod) (int, int, int, error) {
	desired := 0
	for _, node := range nodes {
		if run, _ := nodeShouldRun(node, ds); !run {
			continue
		}
		desired++
		if _, ok := byNode[node.Name]; !ok {
			byNode[node.Name] = nil
		}
	}
	maxUnavailable, err := unavailableCount(ds, desired)
	if err != nil {
		return 0, 0, 0, err
	}
	maxSurge, err := surgeCount(ds, desired)
	if err != nil {
		return 0, 0, 0, err
	}
	if desired > 0 && maxUnavailable == 0 && maxSurge == 0 {
		maxUnavailable = 1
	}
	return maxSurge, maxUnavailable, desired, nil
}

// unavailableCount scales maxUnavailable to n nodes (rounding up).
func unavailableCount(ds *appsv1.DaemonSet, n int) (int, error) {
	ru := ds.Spec.UpdateStrategy.RollingUpdate
	if ds.Spec.UpdateStrategy.Type != appsv1.RollingUpdateDaemonSetStrategyType || ru == nil || ru.MaxUnavailable == nil {
		return 0, nil
	}
	v, err := intstr.GetScaledValueFromIntOrPercent(ru.MaxUnavailable, n, true)
	if err != nil {
		return 0, fmt.Errorf("invalid value for MaxUnavailable: %w", err)
	}
	return v, nil
}

// surgeCount scales maxSurge to n nodes (rounding up).
func surgeCount(ds *appsv1.DaemonSet, n int) (int, error) {
	ru := ds.Spec.UpdateStrategy.RollingUpdate
	if ds.Spec.UpdateStrategy.Type != appsv1.RollingUpdateDaemonSetStrategyType || ru == nil || ru.MaxSurge == nil {
		return 0, nil
	}
	v, err := intstr.GetScaledValueFromIntOrPercent(ru.MaxSurge, n, true)
	if err != nil {
		return 0, fmt.Errorf("invalid value for MaxSurge: %w", err)
	}
	return v, nil
}

// allowsSurge reports whether ds's rolling update surges.
func allowsSurge(ds *appsv1.DaemonSet) bool {
	n, err := surgeCount(ds, 1)
	return err == nil && n != 0
}

// updatedPodsOnNode splits a node's live pods into the one of the current
// template and the one of an older template; ok is false when there are
// several of either (manage prunes them first).
func updatedPodsOnNode(ds *appsv1.DaemonSet, pods []*corev1.Pod, hash string) (newPod, oldPod *corev1.Pod, ok bool) {
	for _, p := range pods {
		if p.DeletionTimestamp != nil {
			continue
		}
		if isPodUpdated(ds, p, hash) {
			if newPod != nil {
				return nil, nil, false
			}
			newPod = p
			continue
		}
		if oldPod != nil {
			return nil, nil, false
		}
		oldPod = p
	}
	return newPod, oldPod, true
}
