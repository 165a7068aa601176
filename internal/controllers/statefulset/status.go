package statefulset

import (
	"context"
	"fmt"
	"reflect"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// computeStatus counts pods as Kubernetes does: replicas are the created
// pods; ready ones are Running with Ready=True, available ones also ready
// for minReadySeconds; current and updated ones are created, not
// terminating, at the current or update revision.
func computeStatus(set *appsv1.StatefulSet, current, update *appsv1.ControllerRevision, collisionCount int32, now time.Time, lists ...[]*corev1.Pod) appsv1.StatefulSetStatus {
	st := appsv1.StatefulSetStatus{
		ObservedGeneration: set.Generation,
		CurrentRevision:    current.Name,
		UpdateRevision:     update.Name,
		CollisionCount:     &collisionCount,
		Conditions:         append([]appsv1.StatefulSetCondition(nil), set.Status.Conditions...),
	}
	for _, pods := range lists {
		for _, p := range pods {
			if !isCreated(p) {
				continue
			}
			st.Replicas++
			if isRunningAndReady(p) {
				st.ReadyReplicas++
				if isAvailable(p, set.Spec.MinReadySeconds, now) {
					st.AvailableReplicas++
				}
			}
			if isTerminating(p) {
				continue
			}
			if rev := podRevision(p); rev == current.Name {
				st.CurrentReplicas++
			}
			if podRevision(p) == update.Name {
				st.UpdatedReplicas++
			}
		}
	}
	return st
}

// completeUpdate ends a rollout: once every wanted pod is updated and
// ready, the update revision becomes the current one.
func completeUpdate(set *appsv1.StatefulSet, st *appsv1.StatefulSetStatus) {
	n := int32(replicasOf(set))
	if st.UpdatedReplicas == n && st.ReadyReplicas == n && st.Replicas == n {
		st.CurrentReplicas = st.UpdatedReplicas
		st.CurrentRevision = st.UpdateRevision
	}
}

// statusChanged reports whether st says something set's status does not
// (Kubernetes' inconsistentStatus: collisionCount alone is no reason to
// write).
func statusChanged(set *appsv1.StatefulSet, st *appsv1.StatefulSetStatus) bool {
	old := &set.Status
	return st.ObservedGeneration > old.ObservedGeneration ||
		st.Replicas != old.Replicas || st.CurrentReplicas != old.CurrentReplicas ||
		st.ReadyReplicas != old.ReadyReplicas || st.UpdatedReplicas != old.UpdatedReplicas ||
		st.AvailableReplicas != old.AvailableReplicas ||
		st.CurrentRevision != old.CurrentRevision || st.UpdateRevision != old.UpdateRevision ||
		!reflect.DeepEqual(old.Conditions, st.Conditions)
}

// writeStatus completes a finished rollout and writes st if it changed,
// remembering the written resourceVersion so the next sync waits for the
// cache to show it.
func (r *reconciler) writeStatus(ctx context.Context, set *appsv1.StatefulSet, st appsv1.StatefulSetStatus) error {
	completeUpdate(set, &st)
	if !statusChanged(set, &st) {
		return nil
	}
	cp := set.DeepCopy()
	cp.Status = st
	out, err := r.sets.Namespace(set.Namespace).UpdateStatus(ctx, cp, metav1.UpdateOptions{})
	if err != nil {
		return fmt.Errorf("update status of statefulset %s: %w", keyOf(set), err)
	}
	r.wroteSet(keyOf(set), out.ResourceVersion)
	return nil
}

// wroteSet records the resourceVersion of our last write of the set.
func (r *reconciler) wroteSet(key, rv string) {
	r.rvMu.Lock()
	defer r.rvMu.Unlock()
	r.setRVs[key] = rv
}

// setCacheStale reports whether the cached set is older than our last
// write of it (the cache has not caught up with our own status write).
func (r *reconciler) setCacheStale(set *appsv1.StatefulSet) bool {
	r.rvMu.Lock()
	written, ok := r.setRVs[keyOf(set)]
	r.rvMu.Unlock()
	if !ok {
		return false
	}
	w, err1 := strconv.ParseUint(written, 10, 64)
	c, err2 := strconv.ParseUint(set.ResourceVersion, 10, 64)
	if err1 != nil || err2 != nil {
		return false
	}
	return c < w
}
