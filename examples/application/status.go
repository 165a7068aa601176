package application

import (
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/controllerutil"
)

// Condition reasons.
const (
	ReasonReplicasReady    = "ReplicasReady"
	ReasonReplicasNotReady = "ReplicasNotReady"
	ReasonRollingOut       = "RollingOut"
	ReasonRolloutComplete  = "RolloutComplete"
	ReasonDeadlineExceeded = "ProgressDeadlineExceeded"
	// ReasonBlocked: the operator cannot act (a name taken by an object
	// it does not own, an invalid name); the message says why.
	ReasonBlocked = "Blocked"
)

// Observation is what ComputeStatus derives the status from.
type Observation struct {
	// Deployment is the Application's Deployment as the server last
	// returned it; nil when it does not exist (yet).
	Deployment *appsv1.Deployment
	// Blocked, when non-nil, is why the operator cannot converge the
	// Application (phase Failed, Progressing=False reason Blocked).
	Blocked error
	// Now stamps the conditions whose status changes.
	Now time.Time
}

// ComputeStatus returns the status of app given obs; app is not modified.
// Conditions whose status is unchanged keep their lastTransitionTime, so
// computing the status of an unchanged world returns app.Status
// unchanged (apart from observedGeneration, which follows app).
//
//   - Terminating: app has a deletionTimestamp (the rest of the status
//     is kept as it was);
//   - Failed: obs.Blocked, or the Deployment's Progressing condition is
//     False with reason ProgressDeadlineExceeded;
//   - Running: the Deployment observed its current spec and has exactly
//     spec.replicas pods, all updated and ready;
//   - Pending: no pod is ready yet;
//   - Progressing: otherwise (rolling out, scaling).
func ComputeStatus(app *Application, obs Observation) ApplicationStatus {
	var st ApplicationStatus
	app.Status.DeepCopyInto(&st)
	st.ObservedGeneration = app.Generation
	if app.DeletionTimestamp != nil {
		st.Phase = PhaseTerminating
		return st
	}
	desired := app.Spec.ReplicasOrDefault()
	d := obs.Deployment
	st.ReadyReplicas = 0
	if d != nil {
		st.ReadyReplicas = d.Status.ReadyReplicas
	}
	set := func(typ string, ok bool, reason, msg string) {
		s := metav1.ConditionFalse
		if ok {
			s = metav1.ConditionTrue
		}
		controllerutil.SetCondition(app, &st.Conditions, metav1.Condition{Type: typ, Status: s, Reason: reason,
			Message: msg, LastTransitionTime: metav1.NewTime(obs.Now)})
	}
	ready := fmt.Sprintf("%d of %d replicas ready", st.ReadyReplicas, desired)
	if st.ReadyReplicas >= desired {
		set(ConditionAvailable, true, ReasonReplicasReady, ready)
	} else {
		set(ConditionAvailable, false, ReasonReplicasNotReady, ready)
	}
	switch {
	case obs.Blocked != nil:
		st.Phase = PhaseFailed
		set(ConditionProgressing, false, ReasonBlocked, obs.Blocked.Error())
	case deadlineExceeded(d):
		st.Phase = PhaseFailed
		set(ConditionProgressing, false, ReasonDeadlineExceeded, "the Deployment exceeded its progress deadline: "+ready)
	case rolledOut(d, desired):
		st.Phase = PhaseRunning
		set(ConditionProgressing, false, ReasonRolloutComplete, ready)
	case st.ReadyReplicas == 0:
		st.Phase = PhasePending
		set(ConditionProgressing, true, ReasonRollingOut, ready)
	default:
		st.Phase = PhaseProgressing
		set(ConditionProgressing, true, ReasonRollingOut, ready)
	}
	return st
}

// rolledOut: d has observed its spec and runs exactly desired pods, all
// of the current template and ready.
func rolledOut(d *appsv1.Deployment, desired int32) bool {
	if d == nil {
		return false
	}
	s := d.Status
	return s.ObservedGeneration >= d.Generation && s.Replicas == desired && s.UpdatedReplicas == desired &&
		s.ReadyReplicas == desired && s.AvailableReplicas == desired
}

func deadlineExceeded(d *appsv1.Deployment) bool {
	if d == nil {
		return false
	}
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentProgressing {
			return c.Status == "False" && c.Reason == ReasonDeadlineExceeded
		}
	}
	return false
}
