package printers

import (
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// TestJobRows covers kubectl's STATUS order, the COMPLETIONS forms and
// DURATION (running: since start; finished: start to completion).
func TestJobRows(t *testing.T) {
	cond := func(t batchv1.JobConditionType, s corev1.ConditionStatus) batchv1.JobCondition {
		return batchv1.JobCondition{Type: t, Status: s}
	}
	start := ago(3 * time.Minute)
	cases := []struct {
		name       string
		mutate     func(j *batchv1.Job)
		status     string
		completion string
		duration   string
	}{
		{"running", func(j *batchv1.Job) { j.Status.StartTime = &start }, "Running", "0/1", "3m"},
		{"complete", func(j *batchv1.Job) {
			j.Status.StartTime, j.Status.CompletionTime, j.Status.Succeeded = &start, new(ago(time.Minute)), 1
			j.Status.Conditions = []batchv1.JobCondition{cond(batchv1.JobSuccessCriteriaMet, "True"), cond(batchv1.JobComplete, "True")}
		}, "Complete", "1/1", "2m"},
		{"failed", func(j *batchv1.Job) {
			j.Status.Conditions = []batchv1.JobCondition{cond(batchv1.JobFailureTarget, "True"), cond(batchv1.JobFailed, "True")}
		}, "Failed", "0/1", ""},
		{"terminating", func(j *batchv1.Job) { j.DeletionTimestamp = new(ago(0)) }, "Terminating", "0/1", ""},
		{"suspended", func(j *batchv1.Job) {
			j.Status.Conditions = []batchv1.JobCondition{cond(batchv1.JobSuspended, "True")}
			j.Spec.Completions, j.Spec.Parallelism = nil, new(int32(3))
		}, "Suspended", "0/1 of 3", ""},
		{"first condition of a type decides", func(j *batchv1.Job) {
			j.Status.Conditions = []batchv1.JobCondition{cond(batchv1.JobComplete, "False"), cond(batchv1.JobComplete, "True")}
		}, "Running", "0/1", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			j := &batchv1.Job{ObjectMeta: meta("j", time.Hour), Spec: batchv1.JobSpec{Completions: new(int32(1)), Template: template("busybox")}}
			c.mutate(j)
			expectRow(t, "batch", "Job", j, "j", c.status, c.completion, c.duration, "60m", "c0", "busybox", "<none>")
		})
	}
}

func TestCronJobRow(t *testing.T) {
	c := &batchv1.CronJob{ObjectMeta: meta("c", time.Hour), Spec: batchv1.CronJobSpec{Schedule: "@hourly",
		JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: template("a", "b")}}}}
	expectRow(t, "batch", "CronJob", c, "c", "@hourly", "<none>", "<unset>", int64(0), "<none>", "60m", "c0,c1", "a,b", "<none>")
	c.Spec.Suspend, c.Spec.TimeZone = new(false), new("UTC")
	c.Status.LastScheduleTime, c.Status.Active = new(ago(5*time.Minute)), []corev1.ObjectReference{{Name: "x"}}
	expectRow(t, "batch", "CronJob", c, "c", "@hourly", "UTC", "False", int64(1), "5m", "60m", "c0,c1", "a,b", "<none>")
}

// TestHPATargets covers each metric source's "current/target" form and
// the "+ N more..." tail.
func TestHPATargets(t *testing.T) {
	q := func(s string) *resource.Quantity { return new(resource.MustParse(s)) }
	specs := []autoscalingv2.MetricSpec{
		{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: "cpu",
			Target: autoscalingv2.MetricTarget{AverageUtilization: new(int32(50))}}},
		{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricSource{
			Target: autoscalingv2.MetricTarget{AverageValue: q("2")}}},
		{Type: autoscalingv2.ObjectMetricSourceType, Object: &autoscalingv2.ObjectMetricSource{
			Target: autoscalingv2.MetricTarget{Value: q("3")}}},
	}
	statuses := []autoscalingv2.MetricStatus{
		{Resource: &autoscalingv2.ResourceMetricStatus{Current: autoscalingv2.MetricValueStatus{AverageUtilization: new(int32(70))}}},
	}
	h := &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: meta("h", time.Minute), Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
		ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{Kind: "Deployment", Name: "web"}, MaxReplicas: 4, Metrics: specs},
		Status: autoscalingv2.HorizontalPodAutoscalerStatus{CurrentReplicas: 2, CurrentMetrics: statuses}}
	expectRow(t, "autoscaling", "HorizontalPodAutoscaler", h, "h", "Deployment/web",
		"cpu: 70%/50%, <unknown>/2 (avg) + 1 more...", "<unset>", int64(4), int64(2), "60s")
	h.Spec.Metrics, h.Spec.MinReplicas = nil, new(int32(1))
	expectRow(t, "autoscaling", "HorizontalPodAutoscaler", h, "h", "Deployment/web", "<none>", "1", int64(4), int64(2), "60s")
}

func TestPDBRow(t *testing.T) {
	p := &policyv1.PodDisruptionBudget{ObjectMeta: meta("p", time.Minute),
		Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: new(intstr.FromString("20%"))}, Status: policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 2}}
	expectRow(t, "policy", "PodDisruptionBudget", p, "p", "N/A", "20%", int64(2), "60s")
}
