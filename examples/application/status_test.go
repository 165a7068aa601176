package application_test

import (
	"errors"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/setpoint-dev/setpoint/examples/application"
)

// TestComputeStatus walks the phases without a server: Pending with no
// pod ready, Progressing while rolling out or scaling (also when the
// Deployment has not observed its spec), Running when every desired pod
// is updated and ready, Failed on a progress deadline or when blocked,
// Terminating while deleted; conditions carry observedGeneration and keep
// their transition time while their status holds.
func TestComputeStatus(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	app := newApp("web", "nginx", 3, 0)
	app.Generation = 5
	deadline := appsv1.DeploymentCondition{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded"}
	for _, tc := range []struct {
		name      string
		obs       application.Observation
		phase     application.Phase
		ready     int32
		available metav1.ConditionStatus
		progress  string
	}{
		{"no deployment", application.Observation{}, application.PhasePending, 0, metav1.ConditionFalse, application.ReasonRollingOut},
		{"none ready", application.Observation{Deployment: deploymentStatus(2, 3, 3, 0)}, application.PhasePending, 0, metav1.ConditionFalse, application.ReasonRollingOut},
		{"some ready", application.Observation{Deployment: deploymentStatus(2, 3, 3, 2)}, application.PhaseProgressing, 2, metav1.ConditionFalse, application.ReasonRollingOut},
		{"spec not observed", application.Observation{Deployment: deploymentStatus(1, 3, 3, 3)}, application.PhaseProgressing, 3, metav1.ConditionTrue, application.ReasonRollingOut},
		{"old pods left", application.Observation{Deployment: deploymentStatus(2, 4, 3, 3)}, application.PhaseProgressing, 3, metav1.ConditionTrue, application.ReasonRollingOut},
		{"rolled out", application.Observation{Deployment: deploymentStatus(2, 3, 3, 3)}, application.PhaseRunning, 3, metav1.ConditionTrue, application.ReasonRolloutComplete},
		{"deadline", application.Observation{Deployment: deploymentStatus(2, 3, 3, 1, deadline)}, application.PhaseFailed, 1, metav1.ConditionFalse, application.ReasonDeadlineExceeded},
		{"blocked", application.Observation{Deployment: deploymentStatus(2, 3, 3, 3), Blocked: errors.New("taken")}, application.PhaseFailed, 3, metav1.ConditionTrue, application.ReasonBlocked},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.obs.Now = t0
			st := application.ComputeStatus(app, tc.obs)
			avail := meta.FindStatusCondition(st.Conditions, application.ConditionAvailable)
			prog := meta.FindStatusCondition(st.Conditions, application.ConditionProgressing)
			switch {
			case st.Phase != tc.phase || st.ReadyReplicas != tc.ready || st.ObservedGeneration != 5:
				t.Fatalf("status %+v", st)
			case avail == nil || avail.Status != tc.available || avail.ObservedGeneration != 5 || !avail.LastTransitionTime.Time.Equal(t0):
				t.Fatalf("Available %+v", avail)
			case prog == nil || prog.Reason != tc.progress || prog.ObservedGeneration != 5:
				t.Fatalf("Progressing %+v", prog)
			}
		})
	}
	if app.Status.Phase != "" || app.Status.Conditions != nil {
		t.Fatalf("ComputeStatus changed its argument: %+v", app.Status)
	}

	// The same world later: nothing changes, transition times included.
	app.Status = application.ComputeStatus(app, application.Observation{Deployment: deploymentStatus(2, 3, 3, 3), Now: t0})
	again := application.ComputeStatus(app, application.Observation{Deployment: deploymentStatus(2, 3, 3, 3), Now: t0.Add(time.Hour)})
	if !equality.Semantic.DeepEqual(again, app.Status) {
		t.Fatalf("recomputed status differs:\n%+v\n%+v", again, app.Status)
	}
	// A change flips Available's time only.
	later := application.ComputeStatus(app, application.Observation{Deployment: deploymentStatus(2, 3, 3, 2), Now: t0.Add(time.Hour)})
	if c := meta.FindStatusCondition(later.Conditions, application.ConditionAvailable); !c.LastTransitionTime.Time.Equal(t0.Add(time.Hour)) {
		t.Fatalf("Available after a change %+v", c)
	}

	app.DeletionTimestamp = ptr.To(metav1.NewTime(t0))
	if st := application.ComputeStatus(app, application.Observation{Now: t0}); st.Phase != application.PhaseTerminating || st.ReadyReplicas != 3 {
		t.Fatalf("terminating: %+v", st)
	}
}

// TestMutateIsIdempotent: mutating a Deployment and a Service the server
// defaulted (extra container fields, a clusterIP, another label) changes
// nothing once they match; a changed spec changes only what the
// Application owns, and the selector (immutable) is never replaced.
func TestMutateIsIdempotent(t *testing.T) {
	app := newApp("web", "nginx:1.25", 2, 8080)
	d := &appsv1.Deployment{}
	application.MutateDeployment(d, app)
	c := &d.Spec.Template.Spec.Containers[0]
	c.ImagePullPolicy, c.TerminationMessagePath = corev1.PullIfNotPresent, "/dev/termination-log"
	d.Labels["team"] = "x"
	before := d.DeepCopy()
	application.MutateDeployment(d, app)
	if !equality.Semantic.DeepEqual(d, before) {
		t.Fatalf("mutating a matching deployment changed it:\n%+v\n%+v", d, before)
	}
	d.Spec.Selector.MatchLabels["extra"] = "kept"
	app.Spec.Image, app.Spec.Port = "nginx:1.27", ptr.To[int32](9090)
	application.MutateDeployment(d, app)
	c = &d.Spec.Template.Spec.Containers[0]
	if c.Image != "nginx:1.27" || c.Ports[0].ContainerPort != 9090 || c.ImagePullPolicy != corev1.PullIfNotPresent ||
		d.Spec.Selector.MatchLabels["extra"] != "kept" || d.Labels["team"] != "x" {
		t.Fatalf("after a spec change: %+v", d)
	}

	s := &corev1.Service{}
	application.MutateService(s, app)
	s.Spec.ClusterIP, s.Spec.SessionAffinity = "10.0.0.1", corev1.ServiceAffinityNone
	sBefore := s.DeepCopy()
	application.MutateService(s, app)
	if !equality.Semantic.DeepEqual(s, sBefore) {
		t.Fatalf("mutating a matching service changed it:\n%+v\n%+v", s, sBefore)
	}
}
