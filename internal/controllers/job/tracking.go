package job

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
)

// trackStatus is the job-tracking protocol. For each finished pod that
// still carries the finalizer: (1) write its UID into
// status.uncountedTerminatedPods (Indexed successes go straight into
// completedIndexes); (2) remove its finalizer; (3) move the UIDs whose
// finalizer is gone from the uncounted lists into succeeded/failed. A
// crash between steps repeats a step, never counts a pod twice: a UID in
// the uncounted lists is not added again, and only a pod without the
// finalizer leaves them. Last, once nothing is uncounted or terminating,
// the Complete or Failed condition is added.
func (r *reconciler) trackStatus(ctx context.Context, c *syncCtx, needsFlush bool) error {
	job := c.job
	indexed := isIndexed(job)
	if indexed {
		sort.SliceStable(c.pods, func(i, j int) bool { return completionIndex(c.pods[i]) < completionIndex(c.pods[j]) })
	}
	withFinalizer := sets.New[string]()
	for _, p := range c.pods {
		if hasTrackingFinalizer(p) && !c.expectedRm.Has(string(p.UID)) {
			withFinalizer.Insert(string(p.UID))
		}
	}
	oldCounters := job.Status
	if cleanUncounted(&job.Status, withFinalizer) {
		needsFlush = true
	}
	f := collectFinished(c)
	needsFlush = needsFlush || f.changed
	if indexed && updateIndexStatus(c, f.newIndexes) {
		needsFlush = true
	}
	if c.finished != nil && c.finished.Type == batchv1.JobFailureTarget {
		// Record the interim condition before the finalizers go; the final
		// Failed one follows once every pod is accounted for.
		job.Status.Conditions = append(job.Status.Conditions, *c.finished)
		needsFlush = true
		c.finished = newCondition(batchv1.JobFailed, corev1.ConditionTrue, c.finished.Reason, c.finished.Message, r.clock.Now())
	}
	if isSuccessCriteriaMet(c.finished) {
		if trueCondition(job, batchv1.JobSuccessCriteriaMet) == nil {
			job.Status.Conditions = append(job.Status.Conditions, *c.finished)
			needsFlush = true
		}
		c.finished = newCondition(batchv1.JobComplete, corev1.ConditionTrue, c.finished.Reason, c.finished.Message, r.clock.Now())
	}
	needsFlush, err := r.flushAndRemoveFinalizers(ctx, c, f.toRemove, withFinalizer, &oldCounters, f.policyActions, needsFlush)
	if err != nil {
		return err
	}
	finished := !f.reachedMax && r.enactFinished(c)
	if finished {
		needsFlush = true
	}
	if !needsFlush {
		return nil
	}
	if err := r.updateStatus(ctx, c); err != nil {
		return fmt.Errorf("removing uncounted pods from status: %w", err)
	}
	if finished {
		r.recordFinished(c.job, c.finished)
	}
	r.recordPodsFinished(c.job, oldCounters)
	return nil
}

// finishedPods is what one sync found among the pods with the finalizer.
type finishedPods struct {
	// toRemove are the pods whose finalizer goes in this sync.
	toRemove []*corev1.Pod
	// newIndexes are newly succeeded indexes (Indexed Jobs).
	newIndexes []int
	// policyActions counts the pod failure policy's actions.
	policyActions map[string]int
	// changed reports new UIDs in the uncounted lists or new indexes.
	changed bool
	// reachedMax reports that MaxUncountedPods cut the walk short.
	reachedMax bool
}

// collectFinished walks the pods that still carry the finalizer: those
// whose finalizer may go now are collected, and the finished ones not yet
// recorded are added to status.uncountedTerminatedPods (Indexed
// successes to newIndexes). Once the Job is failing, every pod that did
// not succeed counts as failed.
func collectFinished(c *syncCtx) finishedPods {
	job := c.job
	indexed := isIndexed(job)
	uncounted := job.Status.UncountedTerminatedPods
	out := finishedPods{policyActions: map[string]int{}}
	for _, p := range c.pods {
		uid := string(p.UID)
		if !hasTrackingFinalizer(p) || c.expectedRm.Has(uid) {
			continue
		}
		failed := isPodFailed(p, job)
		if !canRemoveFinalizer(c, p, failed) {
			continue
		}
		out.toRemove = append(out.toRemove, p)
		switch {
		case p.Status.Phase == corev1.PodSucceeded && !c.uncountedFailed.Has(uid):
			if indexed {
				if ix := validIndex(p, *job.Spec.Completions); ix != unknownIndex && !c.prevSucceededIdx.has(ix) {
					out.newIndexes = append(out.newIndexes, ix)
					out.changed = true
				}
			} else if !c.uncountedSucceeded.Has(uid) {
				uncounted.Succeeded = append(uncounted.Succeeded, p.UID)
				out.changed = true
			}
		case failed || (c.finished != nil && !isSuccessCriteriaMet(c.finished)):
			if c.uncountedFailed.Has(uid) || (indexed && validIndex(p, *job.Spec.Completions) == unknownIndex) {
				break
			}
			count := true
			if job.Spec.PodFailurePolicy != nil {
				m := matchPodFailurePolicy(job.Spec.PodFailurePolicy, p)
				if m.action != nil {
					out.policyActions[string(*m.action)]++
				}
				count = m.countFailed
			}
			if count {
				uncounted.Failed = append(uncounted.Failed, p.UID)
				out.changed = true
			}
		}
		if len(out.newIndexes)+len(uncounted.Succeeded)+len(uncounted.Failed) >= MaxUncountedPods {
			// Bound the status size and this sync's work; the writes
			// enqueue the Job again.
			out.reachedMax = true
			break
		}
	}
	return out
}

// updateIndexStatus writes completedIndexes (with newIndexes), succeeded
// and failedIndexes of an Indexed Job; it reports a change of the index
// lists.
func updateIndexStatus(c *syncCtx, newIndexes []int) bool {
	st := &c.job.Status
	changed := false
	c.succeededIdx = c.succeededIdx.withIndexes(newIndexes)
	if s := c.succeededIdx.String(); s != st.CompletedIndexes {
		st.CompletedIndexes = s
		changed = true
	}
	st.Succeeded = int32(c.succeededIdx.total())
	var failed *string
	if c.failedIdx != nil {
		s := c.failedIdx.String()
		failed = &s
	}
	if !equalStrPtr(st.FailedIndexes, failed) {
		st.FailedIndexes = failed
		changed = true
	}
	return changed
}

// canRemoveFinalizer reports whether p's finalizer may go now: the Job is
// deleted or finishing, or p succeeded, or p failed and is not the pod
// whose failure count its index's replacement still has to inherit.
func canRemoveFinalizer(c *syncCtx, p *corev1.Pod, failed bool) bool {
	if c.job.DeletionTimestamp != nil || c.finished != nil || p.Status.Phase == corev1.PodSucceeded {
		return true
	}
	if !failed {
		return false
	}
	if hasBackoffLimitPerIndex(c.job) {
		if ix := completionIndex(p); ix != unknownIndex {
			if w, ok := c.awaiting[ix]; ok && w.UID == p.UID {
				return false
			}
		}
	}
	return true
}

// flushAndRemoveFinalizers writes the status (new uncounted UIDs, interim
// conditions) if needed, removes the finalizers of toRemove, and moves
// the UIDs whose finalizer is gone into the counters. It returns whether
// the status still needs writing.
func (r *reconciler) flushAndRemoveFinalizers(ctx context.Context, c *syncCtx, toRemove []*corev1.Pod,
	withFinalizer sets.Set[string], oldCounters *batchv1.JobStatus, policyActions map[string]int, needsFlush bool) (bool, error) {
	if needsFlush {
		if err := r.updateStatus(ctx, c); err != nil {
			return needsFlush, fmt.Errorf("adding uncounted pods to status: %w", err)
		}
		r.backoff.set(c.key, c.newBackoff)
		r.recordPodsFinished(c.job, *oldCounters)
		*oldCounters = c.job.Status
		needsFlush = false
	}
	for action, n := range policyActions {
		r.metrics.policyActions.WithLabelValues(action).Add(float64(n))
	}
	var rmErr error
	if len(toRemove) > 0 {
		var removed []bool
		removed, rmErr = r.removeFinalizers(ctx, c.key, toRemove)
		for i, p := range toRemove {
			if removed[i] {
				withFinalizer.Delete(string(p.UID))
			}
		}
	}
	if cleanUncounted(&c.job.Status, withFinalizer) {
		needsFlush = true
	}
	if rmErr != nil && needsFlush {
		if err := r.updateStatus(ctx, c); err != nil {
			return needsFlush, errors.Join(rmErr, fmt.Errorf("removing uncounted pods from status: %w", err))
		}
	}
	return needsFlush, rmErr
}

// cleanUncounted moves the uncounted UIDs not in withFinalizer into the
// succeeded and failed counters; it reports a change.
func cleanUncounted(st *batchv1.JobStatus, withFinalizer sets.Set[string]) bool {
	u := st.UncountedTerminatedPods
	changed := false
	if keep := keepUIDs(u.Succeeded, withFinalizer); len(keep) != len(u.Succeeded) {
		st.Succeeded += int32(len(u.Succeeded) - len(keep))
		u.Succeeded = keep
		changed = true
	}
	if keep := keepUIDs(u.Failed, withFinalizer); len(keep) != len(u.Failed) {
		st.Failed += int32(len(u.Failed) - len(keep))
		u.Failed = keep
		changed = true
	}
	return changed
}

func keepUIDs(uids []types.UID, in sets.Set[string]) []types.UID {
	var out []types.UID
	for _, u := range uids {
		if in.Has(string(u)) {
			out = append(out, u)
		}
	}
	return out
}

// removeFinalizers removes the tracking finalizer of pods in parallel,
// recording each as an expected removal first. removed[i] is true when
// pods[i] no longer has it (or is gone).
func (r *reconciler) removeFinalizers(ctx context.Context, key string, pods []*corev1.Pod) ([]bool, error) {
	uids := make([]string, len(pods))
	for i, p := range pods {
		uids[i] = string(p.UID)
	}
	r.finalizers.expect(key, uids)
	removed := make([]bool, len(pods))
	errs := make([]error, len(pods))
	var wg sync.WaitGroup
	for i, p := range pods {
		wg.Go(func() {
			err := r.removeFinalizer(ctx, p)
			if err != nil {
				// No update will show this removal.
				r.finalizers.observed(key, string(p.UID))
				if !apierrors.IsNotFound(err) {
					errs[i] = fmt.Errorf("removing tracking finalizer of %s: %w", podKey(p), err)
					return
				}
			}
			removed[i] = true
		})
	}
	wg.Wait()
	return removed, errors.Join(errs...)
}

// removeFinalizer patches the tracking finalizer out of p (preconditioned
// on its UID).
func (r *reconciler) removeFinalizer(ctx context.Context, p *corev1.Pod) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"$deleteFromPrimitiveList/finalizers": []string{batchv1.JobTrackingFinalizer},
		"uid":                                 p.UID,
	}})
	if err != nil {
		return err
	}
	_, err = r.pods.Namespace(p.Namespace).Patch(ctx, p.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
	return err
}

// enactFinished adds the final Complete or Failed condition (and
// completionTime) once no pod is uncounted or terminating.
func (r *reconciler) enactFinished(c *syncCtx) bool {
	if c.finished == nil {
		return false
	}
	job := c.job
	if u := job.Status.UncountedTerminatedPods; u != nil && len(u.Succeeded)+len(u.Failed) > 0 {
		return false
	}
	if c.terminating > 0 {
		return false
	}
	f := c.finished
	job.Status.Conditions, _ = ensureCondition(job.Status.Conditions, f.Type, f.Status, f.Reason, f.Message, r.clock.Now())
	if f.Type == batchv1.JobComplete {
		t := f.LastTransitionTime
		job.Status.CompletionTime = &t
	}
	return true
}

// recordFinished records the finish event and metric.
func (r *reconciler) recordFinished(job *batchv1.Job, f *batchv1.JobCondition) {
	mode := completionMode(job)
	if f.Type == batchv1.JobComplete {
		if job.Spec.Completions != nil && job.Status.Succeeded > *job.Spec.Completions {
			r.recorder.Event(job, corev1.EventTypeWarning, "TooManySucceededPods", "Too many succeeded pods running after completion count reached")
		}
		r.recorder.Event(job, corev1.EventTypeNormal, "Completed", "Job completed")
		r.metrics.finished.WithLabelValues(mode, "succeeded", f.Reason).Inc()
		return
	}
	r.recorder.Event(job, corev1.EventTypeWarning, f.Reason, f.Message)
	r.metrics.finished.WithLabelValues(mode, "failed", f.Reason).Inc()
}

// recordPodsFinished counts the pods the status newly accounts for.
func (r *reconciler) recordPodsFinished(job *batchv1.Job, old batchv1.JobStatus) {
	mode := completionMode(job)
	if d := job.Status.Succeeded - old.Succeeded; d > 0 {
		r.metrics.podsFinished.WithLabelValues(mode, "succeeded").Add(float64(d))
	}
	if d := job.Status.Failed - old.Failed; d > 0 {
		r.metrics.podsFinished.WithLabelValues(mode, "failed").Add(float64(d))
	}
}

// updateStatus writes c.job's status and keeps the server's answer.
func (r *reconciler) updateStatus(ctx context.Context, c *syncCtx) error {
	base := c.job.ResourceVersion
	out, err := r.jobs.Namespace(c.job.Namespace).UpdateStatus(ctx, c.job, metav1.UpdateOptions{})
	if err != nil {
		return fmt.Errorf("update status of job %s: %w", c.key, err)
	}
	r.written.wrote(c.key, base)
	out.Status.UncountedTerminatedPods = ensureUncounted(out.Status.UncountedTerminatedPods)
	c.job = out
	return nil
}

func ensureUncounted(u *batchv1.UncountedTerminatedPods) *batchv1.UncountedTerminatedPods {
	if u == nil {
		return &batchv1.UncountedTerminatedPods{}
	}
	return u
}

func isSuccessCriteriaMet(c *batchv1.JobCondition) bool {
	return c != nil && c.Type == batchv1.JobSuccessCriteriaMet && c.Status == corev1.ConditionTrue
}

func equalStrPtr(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func uidSet(uids []types.UID) sets.Set[string] {
	s := sets.New[string]()
	for _, u := range uids {
		s.Insert(string(u))
	}
	return s
}
