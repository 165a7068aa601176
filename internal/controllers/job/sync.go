package job

import (
	"context"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/setpoint-dev/setpoint/internal/controllers/podutil"
	"github.com/setpoint-dev/setpoint/reconcile"
)

// syncCtx is what one sync of one Job knows and decides.
type syncCtx struct {
	key string
	// job is a private copy whose status the sync rewrites.
	job         *batchv1.Job
	pods        []*corev1.Pod
	activePods  []*corev1.Pod
	ready       int32
	terminating int32
	// succeeded and failed are the counts including pods not yet in
	// status (uncounted or newly finished).
	succeeded, failed                   int32
	uncountedSucceeded, uncountedFailed sets.Set[string]
	// expectedRm are pods whose finalizer this controller removed but the
	// informer has not yet shown without it.
	expectedRm sets.Set[string]
	// finished is the condition the Job is heading to, nil if none.
	finished *batchv1.JobCondition
	// Indexed Jobs: completed indexes in the status and in all; failed
	// indexes (backoffLimitPerIndex only, else nil); per index, the
	// failed pod whose finalizer waits for its replacement.
	prevSucceededIdx, succeededIdx, failedIdx intervals
	awaiting                                  map[int]*corev1.Pod
	newBackoff                                backoffRecord
	// requeue is the earliest time the sync wants to run again (0: none).
	requeue time.Duration
}

// wakeIn asks for another sync after d (the earliest request wins).
func (c *syncCtx) wakeIn(d time.Duration) {
	if d > 0 && (c.requeue == 0 || d < c.requeue) {
		c.requeue = d
	}
}

// uncountedCandidates returns the pods whose end is not yet accounted
// for: they carry the finalizer, are not in skip or expectedRm, and (for
// Indexed Jobs) have a valid index.
func (c *syncCtx) uncountedCandidates(skip sets.Set[string]) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range c.pods {
		uid := string(p.UID)
		if !hasTrackingFinalizer(p) || skip.Has(uid) || c.expectedRm.Has(uid) {
			continue
		}
		if isIndexed(c.job) && validIndex(p, *c.job.Spec.Completions) == unknownIndex {
			continue
		}
		out = append(out, p)
	}
	return out
}

// newFinishedPods returns the succeeded and failed pods not yet counted.
func (c *syncCtx) newFinishedPods() (succeeded, failed []*corev1.Pod) {
	for _, p := range c.uncountedCandidates(c.uncountedSucceeded) {
		if p.Status.Phase == corev1.PodSucceeded {
			succeeded = append(succeeded, p)
		}
	}
	for _, p := range c.uncountedCandidates(c.uncountedFailed) {
		if isPodFailed(p, c.job) {
			failed = append(failed, p)
		}
	}
	return succeeded, failed
}

// Reconcile implements reconcile.Reconciler: one sync of one Job.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	key := req.Namespace + "/" + req.Name
	shared, err := r.jobInf.Lister().Namespace(req.Namespace).Get(req.Name)
	if apierrors.IsNotFound(err) {
		r.exp.DeleteExpectations(key)
		r.finalizers.forget(key)
		r.written.forget(key)
		r.backoff.remove(key)
		return reconcile.Result{}, nil
	}
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("get job %s from cache: %w", key, err)
	}
	if !managedByUs(shared) {
		return reconcile.Result{}, nil
	}
	if r.written.stale(key, shared.ResourceVersion) {
		// The cache is behind this controller's own status write; the
		// Job's update event brings the sync back.
		return reconcile.Result{}, nil
	}
	if isFinished(shared) {
		r.backoff.remove(key)
		return reconcile.Result{}, nil
	}
	if m := shared.Spec.CompletionMode; m != nil && *m != batchv1.NonIndexedCompletion && *m != batchv1.IndexedCompletion {
		r.recorder.Event(shared, corev1.EventTypeWarning, "UnknownCompletionMode", "Skipped Job sync because completion mode is unknown")
		return reconcile.Result{}, nil
	}
	start := r.clock.Now()
	action := actionReconciling
	c, err := r.sync(ctx, key, shared.DeepCopy(), &action)
	result := "success"
	if err != nil {
		result = "error"
	}
	mode := completionMode(shared)
	r.metrics.syncDuration.WithLabelValues(mode, result, action).Observe(r.clock.Since(start).Seconds())
	r.metrics.syncs.WithLabelValues(mode, result, action).Inc()
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("sync job %s: %w", key, err)
	}
	return reconcile.Result{RequeueAfter: c.requeue}, nil
}

// sync is kube's syncJob on job, a private copy of the cached Job.
func (r *reconciler) sync(ctx context.Context, key string, job *batchv1.Job, action *string) (*syncCtx, error) {
	if job.Status.UncountedTerminatedPods == nil {
		job.Status.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{}
	}
	// Read expectations before the pods: a pod observed in between is then
	// in the list acted on.
	satisfied := r.exp.SatisfiedExpectations(key)
	pods, err := r.podsForJob(ctx, job)
	if err != nil {
		return nil, err
	}
	c := &syncCtx{key: key, job: job, pods: pods, activePods: podutil.FilterActivePods(pods),
		uncountedSucceeded: uidSet(job.Status.UncountedTerminatedPods.Succeeded),
		uncountedFailed:    uidSet(job.Status.UncountedTerminatedPods.Failed),
		expectedRm:         r.finalizers.expected(key)}
	for _, p := range c.activePods {
		if podutil.IsPodReady(p) {
			c.ready++
		}
	}
	for _, p := range pods {
		if isTerminating(p) {
			c.terminating++
		}
	}
	active := int32(len(c.activePods))
	newSucceeded, newFailed := c.newFinishedPods()
	c.succeeded = job.Status.Succeeded + int32(len(newSucceeded)) + int32(c.uncountedSucceeded.Len())
	c.failed = job.Status.Failed + countedFailures(job, newFailed) + int32(c.uncountedFailed.Len())
	if job.Status.StartTime == nil && !isSuspended(job) {
		now := metav1.NewTime(r.clock.Now())
		job.Status.StartTime = &now
	}
	c.newBackoff = r.backoff.get(key).next(newSucceeded, newFailed)
	r.decideFinish(c)

	var manageErr error
	suspendChanged := false
	if c.finished != nil {
		deletedReady, deleted, err := r.deleteActivePods(ctx, job, c.activePods)
		if deleted != active || !satisfied {
			// Pods may remain, or be missing from the cache: not finished yet.
			c.finished = nil
		}
		active -= deleted
		c.terminating += deleted
		c.ready -= deletedReady
		manageErr = err
	} else {
		managed := false
		if satisfied && job.DeletionTimestamp == nil {
			active, *action, manageErr = r.manageJob(ctx, c)
			managed = true
		}
		complete := false
		if job.Spec.Completions == nil {
			complete = c.succeeded > 0 && active == 0
		} else {
			complete = c.succeeded >= *job.Spec.Completions && active == 0
		}
		switch {
		case complete:
			c.finished = newCondition(batchv1.JobSuccessCriteriaMet, corev1.ConditionTrue,
				batchv1.JobReasonCompletionsReached, msgCompletions, r.clock.Now())
		case managed:
			suspendChanged = r.updateSuspendCondition(job)
		}
	}
	needsFlush := suspendChanged || active != job.Status.Active ||
		job.Status.Ready == nil || *job.Status.Ready != c.ready ||
		job.Status.Terminating == nil || *job.Status.Terminating != c.terminating
	job.Status.Active = active
	job.Status.Ready = &c.ready
	job.Status.Terminating = &c.terminating
	if err := r.trackStatus(ctx, c, needsFlush); err != nil {
		return c, fmt.Errorf("tracking status: %w", err)
	}
	return c, manageErr
}

// decideFinish sets c.finished when the Job has met its success or
// failure criteria; otherwise it schedules the active deadline.
func (r *reconciler) decideFinish(c *syncCtx) {
	job, now := c.job, r.clock.Now()
	failure := func(reason, msg string) *batchv1.JobCondition {
		return newCondition(batchv1.JobFailureTarget, corev1.ConditionTrue, reason, msg, now)
	}
	c.finished = trueCondition(job, batchv1.JobSuccessCriteriaMet)
	if c.finished == nil {
		if ft := trueCondition(job, batchv1.JobFailureTarget); ft != nil {
			c.finished = newCondition(batchv1.JobFailed, corev1.ConditionTrue, ft.Reason, ft.Message, now)
		} else if msg := failJobMessage(job, c.pods); msg != nil {
			c.finished = failure(batchv1.JobReasonPodFailurePolicy, *msg)
		}
	}
	if c.finished == nil {
		switch {
		case c.failed > *job.Spec.BackoffLimit || pastBackoffLimitOnFailure(job, c.pods):
			c.finished = failure(batchv1.JobReasonBackoffLimitExceeded, msgBackoffLimit)
		case r.pastActiveDeadline(job):
			c.finished = failure(batchv1.JobReasonDeadlineExceeded, msgDeadline)
		case job.Spec.ActiveDeadlineSeconds != nil && !isSuspended(job):
			c.wakeIn(time.Duration(*job.Spec.ActiveDeadlineSeconds)*time.Second - r.clock.Since(job.Status.StartTime.Time))
		}
	}
	if !isIndexed(job) {
		return
	}
	c.prevSucceededIdx, c.succeededIdx = succeededIndexes(job, c.pods)
	c.succeeded = int32(c.succeededIdx.total())
	if hasBackoffLimitPerIndex(job) {
		c.failedIdx = failedIndexes(job, c.pods)
		if c.finished == nil {
			if job.Spec.MaxFailedIndexes != nil && c.failedIdx.total() > int(*job.Spec.MaxFailedIndexes) {
				c.finished = failure(batchv1.JobReasonMaxFailedIndexesExceeded, msgMaxFailedIndexes)
			} else if c.failedIdx.total() > 0 && c.failedIdx.total()+c.succeededIdx.total() >= int(*job.Spec.Completions) {
				c.finished = failure(batchv1.JobReasonFailedIndexes, msgFailedIndexes)
			}
		}
		c.awaiting = podsAwaitingReplacement(c)
	}
	if c.finished == nil {
		if msg, met := matchSuccessPolicy(job.Spec.SuccessPolicy, *job.Spec.Completions, c.succeededIdx); met {
			c.finished = newCondition(batchv1.JobSuccessCriteriaMet, corev1.ConditionTrue, batchv1.JobReasonSuccessPolicy, msg, now)
		}
	}
}

// updateSuspendCondition sets the Suspended condition from spec.suspend,
// records Suspended or Resumed, and on resume restarts startTime (the
// active deadline counts continuous activity). It reports a change.
func (r *reconciler) updateSuspendCondition(job *batchv1.Job) bool {
	now := r.clock.Now()
	var changed bool
	if isSuspended(job) {
		job.Status.Conditions, changed = ensureCondition(job.Status.Conditions, batchv1.JobSuspended, corev1.ConditionTrue,
			reasonJobSuspended, msgJobSuspended, now)
		if changed {
			r.recorder.Event(job, corev1.EventTypeNormal, "Suspended", msgJobSuspended)
		}
		return changed
	}
	job.Status.Conditions, changed = ensureCondition(job.Status.Conditions, batchv1.JobSuspended, corev1.ConditionFalse,
		reasonJobResumed, msgJobResumed, now)
	if changed {
		r.recorder.Event(job, corev1.EventTypeNormal, "Resumed", msgJobResumed)
		t := metav1.NewTime(now)
		job.Status.StartTime = &t
	}
	return changed
}

// pastActiveDeadline reports whether a running Job has been active for
// activeDeadlineSeconds.
func (r *reconciler) pastActiveDeadline(job *batchv1.Job) bool {
	if job.Spec.ActiveDeadlineSeconds == nil || job.Status.StartTime == nil || isSuspended(job) {
		return false
	}
	return r.clock.Since(job.Status.StartTime.Time) >= time.Duration(*job.Spec.ActiveDeadlineSeconds)*time.Second
}

// countedFailures is the number of failed that count toward backoffLimit
// (a pod failure policy may ignore some).
func countedFailures(job *batchv1.Job, failed []*corev1.Pod) int32 {
	n := int32(len(failed))
	if job.Spec.PodFailurePolicy != nil {
		for _, p := range failed {
			if !matchPodFailurePolicy(job.Spec.PodFailurePolicy, p).countFailed {
				n--
			}
		}
	}
	return n
}
