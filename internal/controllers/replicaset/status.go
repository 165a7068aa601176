package replicaset

import (
	"context"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/setpoint-dev/setpoint/internal/controllers/podutil"
)

// calculateStatus returns rs's status as the pods show it at now. The
// ReplicaFailure condition is added when manageErr is set (reason
// FailedCreate or FailedDelete) and removed once a sync manages cleanly.
// observedGeneration is left to updateStatus.
func calculateStatus(rs *appsv1.ReplicaSet, pods []*corev1.Pod, manageErr error, now time.Time) appsv1.ReplicaSetStatus {
	st := *rs.Status.DeepCopy()
	template := labels.SelectorFromSet(rs.Spec.Template.Labels)
	var fullyLabeled, ready, available int32
	mnow := metav1.NewTime(now)
	for _, p := range pods {
		if template.Matches(labels.Set(p.Labels)) {
			fullyLabeled++
		}
		if podutil.IsPodReady(p) {
			ready++
			if podutil.IsPodAvailable(p, rs.Spec.MinReadySeconds, mnow) {
				available++
			}
		}
	}
	failure := conditionIndex(st.Conditions, appsv1.ReplicaSetReplicaFailure)
	switch {
	case manageErr != nil && failure < 0:
		reason := "FailedDelete"
		if len(pods) < replicasOf(rs) {
			reason = "FailedCreate"
		}
		st.Conditions = append(st.Conditions, appsv1.ReplicaSetCondition{
			Type: appsv1.ReplicaSetReplicaFailure, Status: corev1.ConditionTrue,
			LastTransitionTime: mnow, Reason: reason, Message: manageErr.Error(),
		})
	case manageErr == nil && failure >= 0:
		st.Conditions = append(st.Conditions[:failure:failure], st.Conditions[failure+1:]...)
		if len(st.Conditions) == 0 {
			st.Conditions = nil
		}
	}
	st.Replicas = int32(len(pods))
	st.FullyLabeledReplicas = fullyLabeled
	st.ReadyReplicas = ready
	st.AvailableReplicas = available
	return st
}

func conditionIndex(conds []appsv1.ReplicaSetCondition, t appsv1.ReplicaSetConditionType) int {
	for i := range conds {
		if conds[i].Type == t {
			return i
		}
	}
	return -1
}

// updateStatus writes st (with observedGeneration = rs.generation)
// through the status subresource, unless the cached status already says
// so. A conflict is returned: the controller retries the sync at once
// with the newer object.
func (r *reconciler) updateStatus(ctx context.Context, rs *appsv1.ReplicaSet, st appsv1.ReplicaSetStatus) error {
	st.ObservedGeneration = rs.Generation
	if equality.Semantic.DeepEqual(rs.Status, st) {
		return nil
	}
	return r.owner.UpdateStatus(ctx, rs, st)
}
