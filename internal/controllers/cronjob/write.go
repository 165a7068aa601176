package cronjob

import (
	"context"
	"fmt"
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// createJob creates the Job of the schedule time t and records it in
// status (active, lastScheduleTime). It reports false, without error, when
// the Job exists already and needs no status change: created by someone
// else, or already in status.active.
func (r *reconciler) createJob(ctx context.Context, cj *batchv1.CronJob, t, now time.Time) (bool, error) {
	req, err := jobFor(cj, t)
	if err != nil {
		return false, fmt.Errorf("job from template of cronjob %s/%s: %w", cj.Namespace, cj.Name, err)
	}
	job, err := r.jobs.Namespace(cj.Namespace).Create(ctx, req, metav1.CreateOptions{})
	switch {
	case apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
		return false, fmt.Errorf("create job %s/%s: %w", cj.Namespace, req.Name, err)
	case apierrors.IsAlreadyExists(err):
		// Created by an earlier sync whose status write was lost, or by
		// someone else (then they own its bookkeeping).
		job, err = r.jobs.Namespace(cj.Namespace).Get(ctx, req.Name, metav1.GetOptions{})
		if err != nil {
			return false, fmt.Errorf("get job %s/%s: %w", cj.Namespace, req.Name, err)
		}
		if !metav1.IsControlledBy(job, cj) || inActive(cj, job.UID) {
			return false, nil
		}
		r.log.Info("job already exists", "cronjob", cj.Namespace+"/"+cj.Name, "job", job.Name)
	case err != nil:
		r.recorder.Eventf(cj, corev1.EventTypeWarning, "FailedCreate", "Error creating job: %v", err)
		return false, fmt.Errorf("create job %s/%s: %w", cj.Namespace, req.Name, err)
	default:
		r.metrics.creationSkew.Observe(now.Sub(t).Seconds())
		r.recorder.Eventf(cj, corev1.EventTypeNormal, "SuccessfulCreate", "Created job %v", job.Name)
	}
	cj.Status.Active = append(cj.Status.Active, jobRef(job))
	cj.Status.LastScheduleTime = &metav1.Time{Time: t}
	return true, nil
}

// replaceActive deletes every active Job (concurrencyPolicy Replace).
func (r *reconciler) replaceActive(ctx context.Context, cj *batchv1.CronJob) error {
	for _, ref := range slices.Clone(cj.Status.Active) {
		job, err := r.jobs.Namespace(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
		if err != nil {
			r.recorder.Eventf(cj, corev1.EventTypeWarning, "FailedGet", "Get job: %v", err)
			return fmt.Errorf("get job %s/%s: %w", ref.Namespace, ref.Name, err)
		}
		if !r.deleteJob(ctx, cj, job) {
			return fmt.Errorf("could not replace job %s/%s", job.Namespace, job.Name)
		}
	}
	return nil
}

// deleteJob deletes the Job (its pods in the background) and drops it from
// status.active; it reports success.
func (r *reconciler) deleteJob(ctx context.Context, cj *batchv1.CronJob, job *batchv1.Job) bool {
	bg := metav1.DeletePropagationBackground
	err := r.jobs.Namespace(job.Namespace).Delete(ctx, job.Name, metav1.DeleteOptions{
		PropagationPolicy: &bg, Preconditions: &metav1.Preconditions{UID: &job.UID}})
	if apierrors.IsNotFound(err) {
		// Deleted by an earlier sync whose deletion the cache has not
		// shown yet.
		removeActive(cj, job.UID)
		return true
	}
	if err != nil {
		r.recorder.Eventf(cj, corev1.EventTypeWarning, "FailedDelete", "Deleted job: %v", err)
		r.log.Error("delete job", "cronjob", cj.Namespace+"/"+cj.Name, "job", job.Name, "err", err)
		return false
	}
	removeActive(cj, job.UID)
	r.recorder.Eventf(cj, corev1.EventTypeNormal, "SuccessfulDelete", "Deleted job %v", job.Name)
	return true
}

// cleanupFinishedJobs deletes the oldest finished Jobs beyond
// successfulJobsHistoryLimit and failedJobsHistoryLimit; it reports
// whether status changed, and how many deletions failed. kube's
// controller only records a failed deletion (FailedDelete) and looks again
// at the next schedule time, which may be an hour away; here the sync is
// retried with back-off.
func (r *reconciler) cleanupFinishedJobs(ctx context.Context, cj *batchv1.CronJob, jobs []*batchv1.Job) (bool, int) {
	if cj.Spec.SuccessfulJobsHistoryLimit == nil && cj.Spec.FailedJobsHistoryLimit == nil {
		return false, 0
	}
	var succeeded, failed []*batchv1.Job
	for _, j := range jobs {
		switch finishedCondition(j) {
		case batchv1.JobComplete:
			succeeded = append(succeeded, j)
		case batchv1.JobFailed:
			failed = append(failed, j)
		}
	}
	changed, failures := false, 0
	for _, set := range []struct {
		limit *int32
		jobs  []*batchv1.Job
	}{{cj.Spec.SuccessfulJobsHistoryLimit, succeeded}, {cj.Spec.FailedJobsHistoryLimit, failed}} {
		if set.limit == nil {
			continue
		}
		deleted, failed := r.removeOldest(ctx, cj, set.jobs, int(*set.limit))
		changed, failures = changed || deleted > 0, failures+failed
	}
	return changed, failures
}

// removeOldest deletes the oldest of jobs beyond keep; it reports how many
// deletions succeeded and failed.
func (r *reconciler) removeOldest(ctx context.Context, cj *batchv1.CronJob, jobs []*batchv1.Job, keep int) (deleted, failed int) {
	n := len(jobs) - keep
	if n <= 0 {
		return 0, 0
	}
	jobs = slices.Clone(jobs)
	slices.SortFunc(jobs, byStartTime)
	for _, j := range jobs[:n] {
		if r.deleteJob(ctx, cj, j) {
			deleted++
		} else {
			failed++
		}
	}
	return deleted, failed
}
