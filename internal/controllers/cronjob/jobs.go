package cronjob

import (
	"fmt"
	"maps"
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// jobName is the Job of the schedule time t: <cronjob>-<minutes since the
// epoch>. Schedules have a one-minute granularity, so the name is unique
// per start and doubles as the lock against creating one start twice.
func jobName(cj *batchv1.CronJob, t time.Time) string {
	return fmt.Sprintf("%s-%d", cj.Name, t.Unix()/60)
}

// jobFor builds the Job of the schedule time t from the CronJob's
// template: its labels and annotations, the scheduled-timestamp
// annotation (RFC 3339 in the CronJob's time zone) and the CronJob as
// controller.
func jobFor(cj *batchv1.CronJob, t time.Time) (*batchv1.Job, error) {
	loc := time.UTC
	if tz := cj.Spec.TimeZone; tz != nil {
		l, err := time.LoadLocation(*tz)
		if err != nil {
			return nil, fmt.Errorf("time zone %q: %w", *tz, err)
		}
		loc = l
	}
	labels := maps.Clone(cj.Spec.JobTemplate.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	annotations := maps.Clone(cj.Spec.JobTemplate.Annotations)
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[batchv1.CronJobScheduledTimestampAnnotation] = t.In(loc).Format(time.RFC3339)
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Name: jobName(cj, t), Namespace: cj.Namespace, Labels: labels, Annotations: annotations,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(cj, cronJobGVK)},
		},
	}
	cj.Spec.JobTemplate.Spec.DeepCopyInto(&job.Spec)
	return job, nil
}

// finishedCondition returns Complete or Failed when the Job has that
// condition True, "" while it runs.
func finishedCondition(j *batchv1.Job) batchv1.JobConditionType {
	for _, c := range j.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return c.Type
		}
	}
	return ""
}

func isFinished(j *batchv1.Job) bool { return finishedCondition(j) != "" }

// jobRef is the status.active entry of a Job.
func jobRef(j *batchv1.Job) corev1.ObjectReference {
	return corev1.ObjectReference{Kind: "Job", APIVersion: "batch/v1", Namespace: j.Namespace, Name: j.Name,
		UID: j.UID, ResourceVersion: j.ResourceVersion}
}

func inActive(cj *batchv1.CronJob, uid types.UID) bool {
	return slices.ContainsFunc(cj.Status.Active, func(r corev1.ObjectReference) bool { return r.UID == uid })
}

func inActiveByName(cj *batchv1.CronJob, name string) bool {
	return slices.ContainsFunc(cj.Status.Active, func(r corev1.ObjectReference) bool {
		return r.Name == name && r.Namespace == cj.Namespace
	})
}

func removeActive(cj *batchv1.CronJob, uid types.UID) {
	cj.Status.Active = slices.DeleteFunc(cj.Status.Active, func(r corev1.ObjectReference) bool { return r.UID == uid })
	if len(cj.Status.Active) == 0 {
		cj.Status.Active = nil
	}
}

// byStartTime orders Jobs oldest first by status.startTime, Jobs without
// one last, names breaking ties: the order history cleanup deletes in.
func byStartTime(a, b *batchv1.Job) int {
	as, bs := a.Status.StartTime, b.Status.StartTime
	switch {
	case as == nil && bs != nil:
		return 1
	case as != nil && bs == nil:
		return -1
	case as.Equal(bs):
		return compareStrings(a.Name, b.Name)
	case as.Before(bs):
		return -1
	default:
		return 1
	}
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// scheduledBySelf reports whether the controller made the Job for a
// schedule time (the scheduled-timestamp annotation, and the name derived
// from that time), and which. Jobs made by hand from the CronJob (kubectl
// create job --from) carry neither.
func scheduledBySelf(cj *batchv1.CronJob, j *batchv1.Job) (time.Time, bool) {
	v, ok := j.Annotations[batchv1.CronJobScheduledTimestampAnnotation]
	if !ok {
		return time.Time{}, false
	}
	at, err := time.Parse(time.RFC3339, v)
	if err != nil || j.Name != jobName(cj, at) {
		return time.Time{}, false
	}
	return at, true
}
