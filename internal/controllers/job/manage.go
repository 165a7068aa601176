package job

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/controllers/podutil"
)

// maxGeneratedNameLength is the longest generateName prefix the API
// server keeps whole (63 less the 5 random characters).
const maxGeneratedNameLength = 58

// createTimeout bounds a pod create, which shutdown does not cancel.
const createTimeout = 30 * time.Second

// manageJob creates or deletes pods so that the active ones move toward
// what the Job wants: none while suspended, else min(parallelism,
// remaining completions). It returns the resulting active count and the
// sync's metrics action.
func (r *reconciler) manageJob(ctx context.Context, c *syncCtx) (int32, string, error) {
	job := c.job
	active := int32(len(c.activePods))
	if isSuspended(job) {
		victims := podsForRemoval(job, c.activePods, int(active))
		removedReady, removed, err := r.deleteJobPods(ctx, c, victims)
		c.terminating += removed
		c.ready -= removedReady
		return active - removed, actionPodsDeleted, err
	}
	parallelism := *job.Spec.Parallelism
	var want int32
	if job.Spec.Completions == nil {
		// Any success means the work is done: let the rest finish.
		want = parallelism
		if c.succeeded > 0 {
			want = active
		}
	} else {
		want = max(min(*job.Spec.Completions-c.succeeded, parallelism), 0)
	}
	victims := podsForRemoval(job, c.activePods, int(max(active-want, 0)))
	if isIndexed(job) {
		victims = append(victims, podsOfFinishedIndexes(c, victims)...)
	}
	if len(victims) > MaxPodCreateDeletePerSync {
		victims = victims[:MaxPodCreateDeletePerSync]
	}
	if len(victims) > 0 {
		removedReady, removed, err := r.deleteJobPods(ctx, c, victims)
		c.terminating += removed
		c.ready -= removedReady
		return active - removed, actionPodsDeleted, err
	}
	var terminating int32
	if onlyReplaceFailedPods(job) {
		terminating = c.terminating
	}
	diff := want - terminating - active
	if diff <= 0 {
		return active, actionTracking, nil
	}
	if !hasBackoffLimitPerIndex(job) {
		if wait := c.newBackoff.remaining(r.clock); wait > 0 {
			c.wakeIn(wait)
			return active, actionPodsCreated, nil
		}
	}
	diff = min(diff, MaxPodCreateDeletePerSync)
	var indexes []int
	if isIndexed(job) {
		indexes = firstPendingIndexes(c, int(diff))
		if hasBackoffLimitPerIndex(job) {
			indexes = r.indexesOutOfBackoff(c, indexes)
		}
		diff = int32(len(indexes))
		if diff == 0 {
			return active, actionPodsCreated, nil
		}
	}
	created, err := r.createPods(ctx, c, int(diff), indexes)
	return active + int32(created), actionPodsCreated, err
}

// indexesOutOfBackoff keeps the indexes whose per-index back-off has
// passed and schedules a sync for the first of the others.
func (r *reconciler) indexesOutOfBackoff(c *syncCtx, indexes []int) []int {
	var ready []int
	for _, ix := range indexes {
		if wait := remainingForIndex(r.clock, c.awaiting[ix]); wait > 0 {
			c.wakeIn(wait)
			continue
		}
		ready = append(ready, ix)
	}
	return ready
}

// podsForRemoval returns at least n of active to delete: for Indexed Jobs
// first the pods with an invalid index and all but one pod per index,
// then the pods ranked first by podutil.ActivePods.
func podsForRemoval(job *batchv1.Job, active []*corev1.Pod, n int) []*corev1.Pod {
	var rm, left []*corev1.Pod
	if isIndexed(job) {
		rm, left = duplicateIndexPods(active, *job.Spec.Completions)
	} else {
		left = append(left, active...)
	}
	if len(rm) < n {
		sort.Sort(podutil.ActivePods(left))
		rm = append(rm, left[:min(n-len(rm), len(left))]...)
	}
	return rm
}

// duplicateIndexPods splits pods into those to remove (invalid index, or
// not the best pod of their index) and the rest.
func duplicateIndexPods(pods []*corev1.Pod, completions int32) (rm, left []*corev1.Pod) {
	byIndex := map[int][]*corev1.Pod{}
	for _, p := range pods {
		ix := validIndex(p, completions)
		if ix == unknownIndex {
			rm = append(rm, p)
			continue
		}
		byIndex[ix] = append(byIndex[ix], p)
	}
	ixs := make([]int, 0, len(byIndex))
	for ix := range byIndex {
		ixs = append(ixs, ix)
	}
	sort.Ints(ixs)
	for _, ix := range ixs {
		group := byIndex[ix]
		sort.Sort(podutil.ActivePods(group))
		rm = append(rm, group[:len(group)-1]...)
		left = append(left, group[len(group)-1])
	}
	return rm, left
}

// podsOfFinishedIndexes returns the active pods, not already in skip,
// whose index has succeeded or failed.
func podsOfFinishedIndexes(c *syncCtx, skip []*corev1.Pod) []*corev1.Pod {
	chosen := map[*corev1.Pod]bool{}
	for _, p := range skip {
		chosen[p] = true
	}
	var out []*corev1.Pod
	for _, p := range c.activePods {
		ix := completionIndex(p)
		if !chosen[p] && ix != unknownIndex && (c.succeededIdx.has(ix) || c.failedIdx.has(ix)) {
			out = append(out, p)
		}
	}
	return out
}

// createPods creates n pods (for Indexed Jobs, one per index of indexes)
// in slow-start batches 1, 2, 4, ..., stopping after a batch with an
// error. It returns how many were created.
func (r *reconciler) createPods(ctx context.Context, c *syncCtx, n int, indexes []int) (int, error) {
	job := c.job
	r.exp.ExpectCreations(c.key, n)
	template := job.Spec.Template.DeepCopy()
	if isIndexed(job) {
		addCompletionIndexEnv(template)
	}
	if !hasTrackingFinalizerList(template.Finalizers) {
		template.Finalizers = append(template.Finalizers, batchv1.JobTrackingFinalizer)
	}
	reason := "new"
	if c.failed > 0 || job.Status.Failed > 0 {
		reason = "recreate_terminating_or_failed"
		if onlyReplaceFailedPods(job) {
			reason = "recreate_failed"
		}
	}
	var created atomic.Int32
	var errs []error
	var mu sync.Mutex
	done := 0
	for batch := min(n, 1); done < n; batch = min(2*batch, n-done) {
		var wg sync.WaitGroup
		failedBefore := len(errs)
		for i := range batch {
			ix := unknownIndex
			if indexes != nil {
				ix = indexes[done+i]
			}
			wg.Go(func() {
				err := r.createPod(ctx, c, template, ix)
				if err == nil {
					created.Add(1)
					r.metrics.podsCreated.WithLabelValues(reason, "succeeded").Inc()
					return
				}
				r.exp.CreationObserved(c.key)
				r.metrics.podsCreated.WithLabelValues(reason, "failed").Inc()
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			})
		}
		wg.Wait()
		done += batch
		if len(errs) > failedBefore {
			// The creates never issued will never be observed.
			for range n - done {
				r.exp.CreationObserved(c.key)
			}
			break
		}
	}
	return int(created.Load()), errors.Join(errs...)
}

// createPod creates one pod from template (with index ix unless
// unknownIndex), controlled by the Job.
func (r *reconciler) createPod(ctx context.Context, c *syncCtx, template *corev1.PodTemplateSpec, ix int) error {
	job := c.job
	t := template
	generateName := job.Name + "-"
	if ix != unknownIndex {
		t = template.DeepCopy()
		if t.Annotations == nil {
			t.Annotations = map[string]string{}
		}
		if t.Labels == nil {
			t.Labels = map[string]string{}
		}
		t.Annotations[batchv1.JobCompletionIndexAnnotation] = strconv.Itoa(ix)
		t.Labels[batchv1.JobCompletionIndexAnnotation] = strconv.Itoa(ix)
		t.Spec.Hostname = fmt.Sprintf("%s-%d", job.Name, ix)
		generateName = generateNameWithIndex(job.Name, ix)
		if hasBackoffLimitPerIndex(job) {
			count, ignored := nextIndexFailureCounts(job, c.awaiting[ix])
			t.Annotations[batchv1.JobIndexFailureCountAnnotation] = strconv.Itoa(int(count))
			if ignored > 0 {
				t.Annotations[batchv1.JobIndexIgnoredFailureCountAnnotation] = strconv.Itoa(int(ignored))
			}
		}
	}
	if len(generateName) > maxGeneratedNameLength {
		generateName = generateName[:maxGeneratedNameLength]
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: generateName, Namespace: job.Namespace,
			Labels: t.Labels, Annotations: t.Annotations, Finalizers: t.Finalizers,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(job, jobGVK)},
		},
		Spec: *t.Spec.DeepCopy(),
	}
	// A create cut short by shutdown may still land on the server, after
	// a successor listed the pods: let it finish, so that a graceful
	// restart never doubles a pod.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), createTimeout)
	defer cancel()
	out, err := r.pods.Namespace(job.Namespace).Create(cctx, pod, metav1.CreateOptions{})
	if err == nil {
		r.recorder.Eventf(job, corev1.EventTypeNormal, "SuccessfulCreate", "Created pod: %s", out.Name)
		return nil
	}
	if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
		return nil
	}
	r.recorder.Eventf(job, corev1.EventTypeWarning, "FailedCreate", "Error creating: %v", err)
	return fmt.Errorf("create pod for job %s: %w", c.key, err)
}

// generateNameWithIndex is "<job>-<index>-", the job name shortened so
// that the prefix fits maxGeneratedNameLength.
func generateNameWithIndex(name string, ix int) string {
	suffix := "-" + strconv.Itoa(ix) + "-"
	prefix := name + suffix
	if len(prefix) > maxGeneratedNameLength {
		prefix = prefix[:maxGeneratedNameLength-len(suffix)] + suffix
	}
	return prefix
}

// addCompletionIndexEnv gives every container JOB_COMPLETION_INDEX from
// the pod's completion index label, unless it sets the variable itself.
func addCompletionIndexEnv(t *corev1.PodTemplateSpec) {
	add := func(c *corev1.Container) {
		for _, e := range c.Env {
			if e.Name == completionIndexEnv {
				return
			}
		}
		c.Env = append(c.Env, corev1.EnvVar{Name: completionIndexEnv, ValueFrom: &corev1.EnvVarSource{
			FieldRef: &corev1.ObjectFieldSelector{
				FieldPath: fmt.Sprintf("metadata.labels['%s']", batchv1.JobCompletionIndexAnnotation)}}})
	}
	for i := range t.Spec.InitContainers {
		add(&t.Spec.InitContainers[i])
	}
	for i := range t.Spec.Containers {
		add(&t.Spec.Containers[i])
	}
}

func hasTrackingFinalizerList(fs []string) bool {
	for _, f := range fs {
		if f == batchv1.JobTrackingFinalizer {
			return true
		}
	}
	return false
}

// deleteJobPods removes the tracking finalizer of each victim and deletes
// it, so that pods the controller removes are not counted as failures.
// It returns how many ready and how many pods were deleted.
func (r *reconciler) deleteJobPods(ctx context.Context, c *syncCtx, victims []*corev1.Pod) (int32, int32, error) {
	keys := make([]string, len(victims))
	for i, p := range victims {
		keys[i] = podKey(p)
	}
	r.exp.ExpectDeletions(c.key, keys)
	return r.deletePods(ctx, c.job, victims, func(p *corev1.Pod, err error) error {
		r.exp.DeletionObserved(c.key, podKey(p))
		return err
	}, true)
}

// deleteActivePods deletes pods keeping their finalizers: the sync that
// sees them terminating counts them.
func (r *reconciler) deleteActivePods(ctx context.Context, job *batchv1.Job, pods []*corev1.Pod) (int32, int32, error) {
	return r.deletePods(ctx, job, pods, func(_ *corev1.Pod, err error) error { return err }, false)
}

// deletePods deletes pods in parallel (first removing the finalizer if
// dropFinalizer). A pod already gone counts as deleted; onFail is called
// for every failure.
func (r *reconciler) deletePods(ctx context.Context, job *batchv1.Job, pods []*corev1.Pod,
	onFail func(*corev1.Pod, error) error, dropFinalizer bool) (int32, int32, error) {
	var ready, deleted atomic.Int32
	errs := make([]error, len(pods))
	var wg sync.WaitGroup
	for i, p := range pods {
		wg.Go(func() {
			var err error
			if dropFinalizer && hasTrackingFinalizer(p) {
				if err = r.removeFinalizer(ctx, p); err != nil && !apierrors.IsNotFound(err) {
					errs[i] = onFail(p, fmt.Errorf("removing completion finalizer: %w", err))
					return
				}
			}
			err = r.pods.Namespace(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{})
			if err != nil {
				onFail(p, err)
				if !apierrors.IsNotFound(err) {
					r.recorder.Eventf(job, corev1.EventTypeWarning, "FailedDelete", "Error deleting: %v", err)
					errs[i] = fmt.Errorf("delete pod %s: %w", podKey(p), err)
					return
				}
			} else {
				r.recorder.Eventf(job, corev1.EventTypeNormal, "SuccessfulDelete", "Deleted pod: %s", p.Name)
			}
			deleted.Add(1)
			if podutil.IsPodReady(p) {
				ready.Add(1)
			}
		})
	}
	wg.Wait()
	return ready.Load(), deleted.Load(), errors.Join(errs...)
}
