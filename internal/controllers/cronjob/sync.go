package cronjob

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/robfig/cron/v3"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/setpoint-dev/setpoint/internal/controllers/controllerref"
	"github.com/setpoint-dev/setpoint/reconcile"
)

// Reconcile implements reconcile.Reconciler: one sync of one CronJob.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	r.syncing.Add(1)
	defer r.syncing.Add(-1)
	key := req.Namespace + "/" + req.Name
	cj, err := r.cjInf.Lister().Namespace(req.Namespace).Get(req.Name)
	if apierrors.IsNotFound(err) {
		return reconcile.Result{}, nil
	}
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("get cronjob %s from cache: %w", key, err)
	}
	jobs, err := r.jobInf.Indexer().ByIndex(controllerref.ControllerUIDIndex, string(cj.UID))
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("cronjob %s: jobs from cache: %w", key, err)
	}
	cp := cj.DeepCopy()
	cleaned, cleanupFailures := r.cleanupFinishedJobs(ctx, cp, jobs)
	requeue, changed, syncErr := r.syncCronJob(ctx, cp, jobs)
	if (cleaned || changed) && !equality.Semantic.DeepEqual(cj.Status, cp.Status) {
		if _, err := r.cronJobs.Namespace(cp.Namespace).UpdateStatus(ctx, cp, metav1.UpdateOptions{}); err != nil {
			return reconcile.Result{}, fmt.Errorf("update status of cronjob %s: %w", key, err)
		}
	}
	if cleanupFailures > 0 && syncErr == nil {
		// retried with back-off (its next sync also computes the requeue)
		return reconcile.Result{}, fmt.Errorf("cronjob %s: %d finished jobs beyond the history limits not deleted", key, cleanupFailures)
	}
	if requeue != nil {
		return reconcile.Result{RequeueAfter: max(*requeue, time.Millisecond)}, nil
	}
	return reconcile.Result{}, syncErr
}

// syncCronJob brings cj's status in line with its Jobs and starts the
// Job of the most recent unmet schedule time if the policy allows. It
// modifies cj (a copy) and reports whether its status must be written and
// when to sync next (nil: only on the next change).
func (r *reconciler) syncCronJob(ctx context.Context, cj *batchv1.CronJob, jobs []*batchv1.Job) (*time.Duration, bool, error) {
	now := r.clock.Now()
	changed, err := r.trackJobs(ctx, cj, jobs, now)
	if err != nil {
		return nil, changed, err
	}
	if cj.DeletionTimestamp != nil {
		return nil, changed, nil
	}
	if tz := cj.Spec.TimeZone; tz != nil {
		if _, err := time.LoadLocation(*tz); err != nil {
			r.recorder.Eventf(cj, corev1.EventTypeWarning, "UnknownTimeZone", "invalid timeZone: %q: %s", *tz, err)
			return nil, changed, nil
		}
	}
	if cj.Spec.Suspend != nil && *cj.Spec.Suspend {
		return nil, changed, nil
	}
	spec, usesTZ := scheduleSpec(cj)
	if usesTZ {
		r.recorder.Eventf(cj, corev1.EventTypeWarning, "UnsupportedSchedule", "CRON_TZ or TZ used in schedule %q is not officially supported, see https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details", cj.Spec.Schedule)
	}
	sched, err := parseSchedule(spec)
	if err != nil {
		r.recorder.Eventf(cj, corev1.EventTypeWarning, "UnparseableSchedule", "unparseable schedule: %q : %s", cj.Spec.Schedule, err)
		return nil, changed, nil
	}
	next := func() (*time.Duration, bool, error) {
		d := nextScheduleTimeDuration(cj, now, sched)
		return &d, changed, nil
	}
	scheduled, err := r.nextScheduleTime(cj, now, sched)
	if err != nil {
		r.recorder.Eventf(cj, corev1.EventTypeWarning, "InvalidSchedule", "invalid schedule: %s : %s", cj.Spec.Schedule, err)
		return nil, changed, nil
	}
	if scheduled == nil {
		return next()
	}
	if d := cj.Spec.StartingDeadlineSeconds; d != nil && scheduled.Add(time.Duration(*d)*time.Second).Before(now) {
		r.recorder.Eventf(cj, corev1.EventTypeWarning, "MissSchedule", "Missed scheduled time to start a job: %s", scheduled.UTC().Format(time.RFC1123Z))
		return next()
	}
	if inActiveByName(cj, jobName(cj, *scheduled)) || (cj.Status.LastScheduleTime != nil && cj.Status.LastScheduleTime.Time.Equal(*scheduled)) {
		return next()
	}
	if cj.Spec.ConcurrencyPolicy == batchv1.ForbidConcurrent && len(cj.Status.Active) > 0 {
		r.recorder.Event(cj, corev1.EventTypeNormal, "JobAlreadyActive", "Not starting job because prior execution is running and concurrency policy is Forbid")
		return next()
	}
	if cj.Spec.ConcurrencyPolicy == batchv1.ReplaceConcurrent {
		if err := r.replaceActive(ctx, cj); err != nil {
			return nil, true, err
		}
		changed = true
	}
	created, err := r.createJob(ctx, cj, *scheduled, now)
	if err != nil {
		return nil, changed, err
	}
	changed = changed || created
	return next()
}

// nextScheduleTime returns the most recent unmet schedule time (nil if
// none), warning when more than maxMissed were missed.
func (r *reconciler) nextScheduleTime(cj *batchv1.CronJob, now time.Time, sched cron.Schedule) (*time.Time, error) {
	_, recent, kind, err := mostRecentScheduleTime(cj, now, sched, true)
	if recent == nil || recent.After(now) {
		return nil, err
	}
	if kind == manyMissed {
		r.recorder.Event(cj, corev1.EventTypeWarning, "TooManyMissedTimes", "too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew")
		r.log.Info("too many missed times", "cronjob", cj.Namespace+"/"+cj.Name)
	}
	return recent, err
}

// trackJobs updates status.active and lastSuccessfulTime from the Jobs the
// CronJob controls, and drops active entries whose Job is gone. A running
// Job the controller made for a past schedule time but never recorded
// (its status write was lost) is recorded again.
func (r *reconciler) trackJobs(ctx context.Context, cj *batchv1.CronJob, jobs []*batchv1.Job, now time.Time) (bool, error) {
	changed := false
	children := make(map[types.UID]bool, len(jobs))
	for _, j := range jobs {
		children[j.UID] = true
		found := inActive(cj, j.UID)
		cond := finishedCondition(j)
		switch {
		case !found && cond == "":
			fresh, err := r.cronJobs.Namespace(cj.Namespace).Get(ctx, cj.Name, metav1.GetOptions{})
			if err != nil {
				return changed, fmt.Errorf("get cronjob %s/%s: %w", cj.Namespace, cj.Name, err)
			}
			if inActive(fresh, j.UID) {
				// Our cache lags our own status write: continue from the
				// stored object.
				*cj = *fresh
				continue
			}
			r.recorder.Eventf(cj, corev1.EventTypeWarning, "UnexpectedJob", "Saw a job that the controller did not create or forgot: %s", j.Name)
			if at, ok := scheduledBySelf(cj, j); ok && !at.After(now) {
				// Ours, with its status write lost (a conflict, a crash):
				// track it again, or Forbid would start a second Job.
				cj.Status.Active = append(cj.Status.Active, jobRef(j))
				if cj.Status.LastScheduleTime == nil || at.After(cj.Status.LastScheduleTime.Time) {
					cj.Status.LastScheduleTime = &metav1.Time{Time: at}
				}
				changed = true
			}
		case cond != "":
			if found {
				removeActive(cj, j.UID)
				r.recorder.Eventf(cj, corev1.EventTypeNormal, "SawCompletedJob", "Saw completed job: %s, condition: %v", j.Name, cond)
				changed = true
			}
			if cond == batchv1.JobComplete && j.Status.CompletionTime != nil &&
				(cj.Status.LastSuccessfulTime == nil || j.Status.CompletionTime.After(cj.Status.LastSuccessfulTime.Time)) {
				t := *j.Status.CompletionTime
				cj.Status.LastSuccessfulTime = &t
				changed = true
			}
		}
	}
	for _, ref := range slices.Clone(cj.Status.Active) {
		if children[ref.UID] {
			continue
		}
		// The cache may lag: ask the server before forgetting the Job.
		_, err := r.jobs.Namespace(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			r.recorder.Eventf(cj, corev1.EventTypeNormal, "MissingJob", "Active job went missing: %v", ref.Name)
			removeActive(cj, ref.UID)
			changed = true
		case err != nil:
			return changed, fmt.Errorf("get job %s/%s: %w", ref.Namespace, ref.Name, err)
		}
	}
	return changed, nil
}
