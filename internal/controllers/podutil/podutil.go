package podutil

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// IsPodActive reports whether the pod still counts toward a controller's
// replicas: not Succeeded, not Failed, and not being deleted.
func IsPodActive(p *corev1.Pod) bool {
	return p.Status.Phase != corev1.PodSucceeded &&
		p.Status.Phase != corev1.PodFailed &&
		p.DeletionTimestamp == nil
}

// IsPodTerminating reports whether the pod is being deleted but has not
// finished: deletionTimestamp set and not yet Succeeded or Failed.
func IsPodTerminating(p *corev1.Pod) bool {
	return p.DeletionTimestamp != nil &&
		p.Status.Phase != corev1.PodSucceeded &&
		p.Status.Phase != corev1.PodFailed
}

// FilterActivePods returns the active pods of pods, in the same order.
func FilterActivePods(pods []*corev1.Pod) []*corev1.Pod {
	out := make([]*corev1.Pod, 0, len(pods))
	for _, p := range pods {
		if IsPodActive(p) {
			out = append(out, p)
		}
	}
	return out
}

// GetPodCondition returns the index and a pointer to the condition of the
// given type in status, or -1 and nil when there is none. The pointer
// aliases status: do not modify it on a shared object.
func GetPodCondition(status *corev1.PodStatus, t corev1.PodConditionType) (int, *corev1.PodCondition) {
	if status == nil {
		return -1, nil
	}
	for i := range status.Conditions {
		if status.Conditions[i].Type == t {
			return i, &status.Conditions[i]
		}
	}
	return -1, nil
}

// GetPodReadyCondition returns the pod's Ready condition, or nil.
func GetPodReadyCondition(status *corev1.PodStatus) *corev1.PodCondition {
	_, c := GetPodCondition(status, corev1.PodReady)
	return c
}

// IsPodReadyConditionTrue reports whether status has Ready=True.
func IsPodReadyConditionTrue(status corev1.PodStatus) bool {
	c := GetPodReadyCondition(&status)
	return c != nil && c.Status == corev1.ConditionTrue
}

// IsPodReady reports whether the pod has the Ready=True condition.
func IsPodReady(p *corev1.Pod) bool {
	return IsPodReadyConditionTrue(p.Status)
}

// IsPodAvailable reports whether the pod has been ready for at least
// minReadySeconds at now.
func IsPodAvailable(p *corev1.Pod, minReadySeconds int32, now metav1.Time) bool {
	c := GetPodReadyCondition(&p.Status)
	if c == nil || c.Status != corev1.ConditionTrue {
		return false
	}
	if minReadySeconds == 0 {
		return true
	}
	minReady := time.Duration(minReadySeconds) * time.Second
	return !c.LastTransitionTime.IsZero() && !c.LastTransitionTime.Add(minReady).After(now.Time)
}

// AvailableAt returns when a ready pod becomes available under
// minReadySeconds, and false if the pod is not ready.
func AvailableAt(p *corev1.Pod, minReadySeconds int32) (time.Time, bool) {
	c := GetPodReadyCondition(&p.Status)
	if c == nil || c.Status != corev1.ConditionTrue {
		return time.Time{}, false
	}
	return c.LastTransitionTime.Add(time.Duration(minReadySeconds) * time.Second), true
}

// UpdatePodCondition sets cond in status (which must be the caller's own
// copy). The condition's LastTransitionTime is kept from the existing one
// when the status did not change. It reports whether anything changed.
func UpdatePodCondition(status *corev1.PodStatus, cond *corev1.PodCondition) bool {
	c := *cond
	i, old := GetPodCondition(status, c.Type)
	if old == nil {
		status.Conditions = append(status.Conditions, c)
		return true
	}
	if c.Status == old.Status {
		c.LastTransitionTime = old.LastTransitionTime
	}
	same := c.Status == old.Status && c.Reason == old.Reason && c.Message == old.Message &&
		c.LastProbeTime.Equal(&old.LastProbeTime) && c.LastTransitionTime.Equal(&old.LastTransitionTime)
	status.Conditions[i] = c
	return !same
}
