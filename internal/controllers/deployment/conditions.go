package deployment

import (
	"fmt"
	"math"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Reasons of the Progressing and Available conditions, as Kubernetes writes
// them (kubectl rollout status reads ProgressDeadlineExceeded).
const (
	ReasonReplicaSetUpdated  = "ReplicaSetUpdated"
	ReasonRSCreateError      = "ReplicaSetCreateError"
	ReasonNewRSCreated       = "NewReplicaSetCreated"
	ReasonFoundNewRS         = "FoundNewReplicaSet"
	ReasonNewRSAvailable     = "NewReplicaSetAvailable"
	ReasonTimedOut           = "ProgressDeadlineExceeded"
	ReasonPaused             = "DeploymentPaused"
	ReasonResumed            = "DeploymentResumed"
	ReasonMinimumAvailable   = "MinimumReplicasAvailable"
	ReasonMinimumUnavailable = "MinimumReplicasUnavailable"
)

func newCondition(t appsv1.DeploymentConditionType, s corev1.ConditionStatus, reason, msg string, now time.Time) appsv1.DeploymentCondition {
	ts := metav1.NewTime(now.Truncate(time.Second))
	return appsv1.DeploymentCondition{Type: t, Status: s, Reason: reason, Message: msg, LastUpdateTime: ts, LastTransitionTime: ts}
}

// getCondition returns a copy of the condition of type t, or nil.
func getCondition(st appsv1.DeploymentStatus, t appsv1.DeploymentConditionType) *appsv1.DeploymentCondition {
	for i := range st.Conditions {
		if st.Conditions[i].Type == t {
			c := st.Conditions[i]
			return &c
		}
	}
	return nil
}

// setCondition puts c into st, unless a condition of its type with the same
// status and reason is there already; the transition time is kept when the
// status did not change. The new condition goes last, as in Kubernetes.
func setCondition(st *appsv1.DeploymentStatus, c appsv1.DeploymentCondition) {
	cur := getCondition(*st, c.Type)
	if cur != nil && cur.Status == c.Status && cur.Reason == c.Reason {
		return
	}
	if cur != nil && cur.Status == c.Status {
		c.LastTransitionTime = cur.LastTransitionTime
	}
	removeCondition(st, c.Type)
	st.Conditions = append(st.Conditions, c)
}

// removeCondition drops the condition of type t. It builds a new slice, so
// a status sharing its conditions with a cached object is safe to edit.
func removeCondition(st *appsv1.DeploymentStatus, t appsv1.DeploymentConditionType) {
	var out []appsv1.DeploymentCondition
	for _, c := range st.Conditions {
		if c.Type != t {
			out = append(out, c)
		}
	}
	st.Conditions = out
}

// hasProgressDeadline: progressDeadlineSeconds set and not "infinite".
func hasProgressDeadline(d *appsv1.Deployment) bool {
	return d.Spec.ProgressDeadlineSeconds != nil && *d.Spec.ProgressDeadlineSeconds != math.MaxInt32
}

// hasRevisionHistoryLimit: revisionHistoryLimit set and not "keep all".
func hasRevisionHistoryLimit(d *appsv1.Deployment) bool {
	return d.Spec.RevisionHistoryLimit != nil && *d.Spec.RevisionHistoryLimit != math.MaxInt32
}

// deploymentComplete: every desired replica updated and available, no old
// one left, and the current generation observed — what kubectl rollout
// status waits for.
func deploymentComplete(d *appsv1.Deployment, st *appsv1.DeploymentStatus) bool {
	n := replicas(d)
	return st.UpdatedReplicas == n && st.Replicas == n && st.AvailableReplicas == n && st.ObservedGeneration >= d.Generation
}

// deploymentProgressing tells whether st shows progress over d's recorded
// status: more updated, ready or available pods, or fewer old ones.
func deploymentProgressing(d *appsv1.Deployment, st *appsv1.DeploymentStatus) bool {
	old := d.Status
	return st.UpdatedReplicas > old.UpdatedReplicas ||
		st.Replicas-st.UpdatedReplicas < old.Replicas-old.UpdatedReplicas ||
		st.ReadyReplicas > old.ReadyReplicas ||
		st.AvailableReplicas > old.AvailableReplicas
}

// deploymentTimedOut tells whether the Progressing condition of st is older
// than the deadline at now (or already says so).
func deploymentTimedOut(d *appsv1.Deployment, st *appsv1.DeploymentStatus, now time.Time) bool {
	if !hasProgressDeadline(d) {
		return false
	}
	c := getCondition(*st, appsv1.DeploymentProgressing)
	if c == nil || c.Reason == ReasonNewRSAvailable {
		return false
	}
	if c.Reason == ReasonTimedOut {
		return true
	}
	deadline := c.LastUpdateTime.Add(time.Duration(*d.Spec.ProgressDeadlineSeconds) * time.Second)
	return deadline.Before(now)
}

// calculateStatus is the status allRSs give d: counts summed over the
// ReplicaSets (updated = the new one's), the Available condition, the
// conditions and collision count carried over.
func calculateStatus(allRSs []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet, d *appsv1.Deployment, now time.Time) appsv1.DeploymentStatus {
	avail := availableTotal(allRSs)
	st := appsv1.DeploymentStatus{
		ObservedGeneration:  d.Generation,
		Replicas:            statusTotal(allRSs),
		UpdatedReplicas:     statusTotal([]*appsv1.ReplicaSet{newRS}),
		ReadyReplicas:       readyTotal(allRSs),
		AvailableReplicas:   avail,
		UnavailableReplicas: max(specTotal(allRSs)-avail, 0),
		CollisionCount:      d.Status.CollisionCount,
		Conditions:          append([]appsv1.DeploymentCondition(nil), d.Status.Conditions...),
	}
	if avail >= replicas(d)-maxUnavailable(d) {
		setCondition(&st, newCondition(appsv1.DeploymentAvailable, corev1.ConditionTrue, ReasonMinimumAvailable, "Deployment has minimum availability.", now))
	} else {
		setCondition(&st, newCondition(appsv1.DeploymentAvailable, corev1.ConditionFalse, ReasonMinimumUnavailable, "Deployment does not have minimum availability.", now))
	}
	return st
}

// rolloutStatus is calculateStatus plus the Progressing condition of a
// rollout: NewReplicaSetAvailable once complete, ReplicaSetUpdated (with a
// fresh lastUpdateTime) on progress, ProgressDeadlineExceeded when the
// deadline passed without any; and the ReplicaFailure condition of the
// ReplicaSets, the new one's first.
func rolloutStatus(allRSs []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet, d *appsv1.Deployment, now time.Time) appsv1.DeploymentStatus {
	st := calculateStatus(allRSs, newRS, d, now)
	if !hasProgressDeadline(d) {
		removeCondition(&st, appsv1.DeploymentProgressing)
	}
	cur := getCondition(d.Status, appsv1.DeploymentProgressing)
	complete := st.Replicas == st.UpdatedReplicas && cur != nil && cur.Reason == ReasonNewRSAvailable
	if hasProgressDeadline(d) && !complete {
		subject := fmt.Sprintf("Deployment %q", d.Name)
		if newRS != nil {
			subject = fmt.Sprintf("ReplicaSet %q", newRS.Name)
		}
		switch {
		case deploymentComplete(d, &st):
			setCondition(&st, newCondition(appsv1.DeploymentProgressing, corev1.ConditionTrue, ReasonNewRSAvailable, subject+" has successfully progressed.", now))
		case deploymentProgressing(d, &st):
			c := newCondition(appsv1.DeploymentProgressing, corev1.ConditionTrue, ReasonReplicaSetUpdated, subject+" is progressing.", now)
			if cur != nil {
				if cur.Status == corev1.ConditionTrue {
					c.LastTransitionTime = cur.LastTransitionTime
				}
				removeCondition(&st, appsv1.DeploymentProgressing)
			}
			setCondition(&st, c)
		case deploymentTimedOut(d, &st, now):
			setCondition(&st, newCondition(appsv1.DeploymentProgressing, corev1.ConditionFalse, ReasonTimedOut, subject+" has timed out progressing.", now))
		}
	}
	if f := replicaFailure(allRSs, newRS); f != nil {
		setCondition(&st, *f)
	} else {
		removeCondition(&st, appsv1.DeploymentReplicaFailure)
	}
	return st
}

// replicaFailure lifts a ReplicaFailure condition of the new ReplicaSet, or
// else of any ReplicaSet, to a Deployment condition.
func replicaFailure(allRSs []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) *appsv1.DeploymentCondition {
	for _, rs := range append([]*appsv1.ReplicaSet{newRS}, allRSs...) {
		if rs == nil {
			continue
		}
		for _, c := range rs.Status.Conditions {
			if c.Type == appsv1.ReplicaSetReplicaFailure {
				return &appsv1.DeploymentCondition{Type: appsv1.DeploymentReplicaFailure, Status: c.Status,
					LastTransitionTime: c.LastTransitionTime, LastUpdateTime: c.LastTransitionTime, Reason: c.Reason, Message: c.Message}
			}
		}
	}
	return nil
}

// progressCheckAfter is when d needs another look for the progress
// deadline: the time left until its Progressing condition's lastUpdateTime
// plus the deadline (0: now), or -1 when no check is due (no deadline, no
// condition, complete, or already timed out).
func progressCheckAfter(d *appsv1.Deployment, st *appsv1.DeploymentStatus, now time.Time) time.Duration {
	cur := getCondition(d.Status, appsv1.DeploymentProgressing)
	if !hasProgressDeadline(d) || cur == nil || deploymentComplete(d, st) || cur.Reason == ReasonTimedOut {
		return -1
	}
	after := cur.LastUpdateTime.Add(time.Duration(*d.Spec.ProgressDeadlineSeconds) * time.Second).Sub(now)
	if after < time.Second {
		return 0
	}
	return after
}
