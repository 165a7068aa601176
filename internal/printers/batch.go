package printers

import (
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// batchTable returns the table of a batch/v1 kind, nil for none.
func batchTable(kind string, now func() time.Time) registry.TableConvertor {
	switch kind {
	case "Job":
		return newTable(jobColumns, jobCells, now)
	case "CronJob":
		return newTable(cronJobColumns, cronJobCells, now)
	}
	return nil
}

var jobSelectorColumn = wide("Selector", "string", "A label query over pods that should match the pod count.")

var jobColumns = []metav1.TableColumnDefinition{
	nameColumn(0),
	column("Status", "string", "Status of the job."),
	column("Completions", "string", "The number of pods which reached phase Succeeded."),
	column("Duration", "string", "Time required to complete the job."),
	ageColumn, containersColumn, imagesColumn, jobSelectorColumn,
}

func jobCells(j *batchv1.Job, now time.Time) []interface{} {
	containers, images := containerCells(j.Spec.Template.Spec.Containers)
	return []interface{}{
		j.Name, jobStatus(j), jobCompletions(j), jobDuration(j, now), age(j.CreationTimestamp, now),
		containers, images, metav1.FormatLabelSelector(j.Spec.Selector),
	}
}

func jobCompletions(j *batchv1.Job) string {
	if j.Spec.Completions != nil {
		return fmt.Sprintf("%d/%d", j.Status.Succeeded, *j.Spec.Completions)
	}
	if p := j.Spec.Parallelism; p != nil && *p > 1 {
		return fmt.Sprintf("%d/1 of %d", j.Status.Succeeded, *p)
	}
	return fmt.Sprintf("%d/1", j.Status.Succeeded)
}

func jobDuration(j *batchv1.Job, now time.Time) string {
	switch st := &j.Status; {
	case st.StartTime == nil:
		return ""
	case st.CompletionTime == nil:
		return duration.HumanDuration(now.Sub(st.StartTime.Time))
	default:
		return duration.HumanDuration(st.CompletionTime.Sub(st.StartTime.Time))
	}
}

// jobStatus is kubectl's STATUS of a job: the first condition type found
// (each judged by the first condition of that type) in this order.
func jobStatus(j *batchv1.Job) string {
	has := func(t batchv1.JobConditionType) bool {
		for _, c := range j.Status.Conditions {
			if c.Type == t {
				return c.Status == corev1.ConditionTrue
			}
		}
		return false
	}
	switch {
	case has(batchv1.JobComplete):
		return "Complete"
	case has(batchv1.JobFailed):
		return "Failed"
	case j.DeletionTimestamp != nil:
		return "Terminating"
	case has(batchv1.JobSuspended):
		return "Suspended"
	case has(batchv1.JobFailureTarget):
		return "FailureTarget"
	case has(batchv1.JobSuccessCriteriaMet):
		return "SuccessCriteriaMet"
	}
	return "Running"
}

var cronJobColumns = []metav1.TableColumnDefinition{
	nameColumn(0),
	column("Schedule", "string", "The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron."),
	column("Timezone", "string", "The time zone name for the given schedule."),
	column("Suspend", "boolean", "This flag tells the controller to suspend subsequent executions."),
	column("Active", "integer", "A list of pointers to currently running jobs."),
	column("Last Schedule", "string", "Information when was the last time the job was successfully scheduled."),
	ageColumn, containersColumn, imagesColumn, jobSelectorColumn,
}

func cronJobCells(c *batchv1.CronJob, now time.Time) []interface{} {
	last := "<none>"
	if t := c.Status.LastScheduleTime; t != nil {
		last = age(*t, now)
	}
	tz := "<none>"
	if c.Spec.TimeZone != nil {
		tz = *c.Spec.TimeZone
	}
	suspend := "<unset>"
	if c.Spec.Suspend != nil {
		suspend = "False"
		if *c.Spec.Suspend {
			suspend = "True"
		}
	}
	containers, images := containerCells(c.Spec.JobTemplate.Spec.Template.Spec.Containers)
	return []interface{}{
		c.Name, c.Spec.Schedule, tz, suspend, int64(len(c.Status.Active)), last, age(c.CreationTimestamp, now),
		containers, images, metav1.FormatLabelSelector(c.Spec.JobTemplate.Spec.Selector),
	}
}
