package job

import (
	"context"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestLifecycle runs its cases on one server (each starts quickly; a
// server does not).
func TestLifecycle(t *testing.T) {
	h := newHarness(t)
	t.Run("non-indexed", func(t *testing.T) { nonIndexedRunsToCompletion(t, h) })
	t.Run("indexed", func(t *testing.T) { indexedPods(t, h) })
	t.Run("adoption", func(t *testing.T) { adoptionOrphansAndMetrics(t, h) })
	t.Run("work-queue", func(t *testing.T) { workQueue(t, h) })
	policies(t, h)
}

func nonIndexedRunsToCompletion(t *testing.T, h *harness) {
	j := h.create(newJob("plain", 3, 2))
	pods := h.waitActive(j, 2)
	for _, p := range pods {
		if !strings.HasPrefix(p.Name, "plain-") || len(p.Name) != len("plain-")+5 {
			t.Errorf("pod name %q, want plain-<5 random>", p.Name)
		}
		ref := metav1.GetControllerOf(p)
		if ref == nil || ref.UID != j.UID || ref.Kind != "Job" || ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion {
			t.Errorf("pod %s controller ref %+v", p.Name, ref)
		}
		if !hasTrackingFinalizer(p) {
			t.Errorf("pod %s has no tracking finalizer: %v", p.Name, p.Finalizers)
		}
		for _, l := range []string{"job-name", "controller-uid", batchv1.JobNameLabel, batchv1.ControllerUidLabel} {
			if p.Labels[l] == "" {
				t.Errorf("pod %s lacks label %s: %v", p.Name, l, p.Labels)
			}
		}
	}
	h.setReady(pods[0])
	h.eventually("ready 1, active 2", func() error {
		st := h.get("plain").Status
		if st.Ready == nil || *st.Ready != 1 || st.Active != 2 || st.StartTime == nil {
			return errorf("status %+v", st)
		}
		return nil
	})
	h.finish(pods[0], 0)
	// Two completions left: a new pod replaces the finished one.
	h.eventually("succeeded 1, active 2", func() error {
		if st := h.get("plain").Status; st.Succeeded != 1 || st.Active != 2 || len(h.activePods(j)) != 2 {
			return errorf("status %+v", st)
		}
		return nil
	})
	for _, p := range h.activePods(j) {
		h.finish(p, 0)
	}
	done := h.waitCondition("plain", batchv1.JobComplete)
	scm := trueCondition(done, batchv1.JobSuccessCriteriaMet)
	c := trueCondition(done, batchv1.JobComplete)
	if scm == nil || scm.Reason != "CompletionsReached" || c.Reason != "CompletionsReached" || c.Message != "Reached expected number of succeeded pods" {
		t.Errorf("conditions %+v", done.Status.Conditions)
	}
	st := done.Status
	if n := len(h.jobPods(j)); n != 3 {
		t.Errorf("%d pods created, want 3", n)
	}
	if st.Succeeded != 3 || st.Failed != 0 || st.Active != 0 || st.CompletionTime == nil ||
		len(st.UncountedTerminatedPods.Succeeded)+len(st.UncountedTerminatedPods.Failed) != 0 || *st.Terminating != 0 {
		t.Errorf("final status %+v", st)
	}
	for _, p := range h.jobPods(j) {
		if hasTrackingFinalizer(p) {
			t.Errorf("pod %s kept the tracking finalizer", p.Name)
		}
	}
	if msg := h.waitEvent("plain", "Completed"); msg != "Job completed" {
		t.Errorf("Completed event message %q", msg)
	}
	if msg := h.eventReasons("plain")["SuccessfulCreate"]; !strings.HasPrefix(msg, "Created pod: plain-") {
		t.Errorf("SuccessfulCreate message %q", msg)
	}
}

func indexedPods(t *testing.T, h *harness) {
	j := newJob("idx", 3, 3)
	mode := batchv1.IndexedCompletion
	j.Spec.CompletionMode = &mode
	j = h.create(j)
	pods := h.waitActive(j, 3)
	seen := map[string]bool{}
	for _, p := range pods {
		ix := p.Annotations[batchv1.JobCompletionIndexAnnotation]
		seen[ix] = true
		if p.Labels[batchv1.JobCompletionIndexAnnotation] != ix {
			t.Errorf("pod %s index label %q, annotation %q", p.Name, p.Labels[batchv1.JobCompletionIndexAnnotation], ix)
		}
		if !strings.HasPrefix(p.Name, "idx-"+ix+"-") || p.Spec.Hostname != "idx-"+ix {
			t.Errorf("pod %s hostname %q for index %s", p.Name, p.Spec.Hostname, ix)
		}
		env := p.Spec.Containers[0].Env
		if len(env) != 1 || env[0].Name != "JOB_COMPLETION_INDEX" || env[0].ValueFrom == nil ||
			env[0].ValueFrom.FieldRef.FieldPath != "metadata.labels['batch.kubernetes.io/job-completion-index']" {
			t.Errorf("pod %s env %+v", p.Name, env)
		}
	}
	if !seen["0"] || !seen["1"] || !seen["2"] {
		t.Fatalf("indexes %v", seen)
	}
	// Index 1 fails: its replacement (after the back-off) takes index 1.
	for _, p := range pods {
		switch completionIndex(p) {
		case 0, 2:
			h.finish(p, 0)
		case 1:
			h.finish(p, 1)
		}
	}
	h.eventually("completed 0,2 failed 1", func() error {
		st := h.get("idx").Status
		if st.CompletedIndexes != "0,2" || st.Failed != 1 || st.Succeeded != 2 {
			return errorf("status %+v", st)
		}
		return nil
	})
	h.clk.Step(DefaultPodFailureBackoff)
	h.nudge("idx")
	again := h.waitActive(j, 1)[0]
	if completionIndex(again) != 1 {
		t.Fatalf("replacement has index %d", completionIndex(again))
	}
	h.finish(again, 0)
	done := h.waitCondition("idx", batchv1.JobComplete)
	if done.Status.CompletedIndexes != "0-2" || done.Status.Succeeded != 3 || done.Status.Failed != 1 {
		t.Errorf("final status %+v", done.Status)
	}
}

func errorf(format string, args ...any) error { return fmtErr(format, args...) }

func adoptionOrphansAndMetrics(t *testing.T, h *harness) {
	j := h.create(newJob("adopt", 2, 1))
	h.waitActive(j, 1)
	// An orphan matching the selector is adopted, with the finalizer.
	orphan := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "stray", Labels: j.Spec.Template.Labels},
		Spec: *j.Spec.Template.Spec.DeepCopy()}
	if _, err := h.pods.Create(context.Background(), orphan, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.eventually("orphan adopted", func() error {
		p, err := h.pods.Get(context.Background(), "stray", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if ref := metav1.GetControllerOf(p); ref == nil || ref.UID != j.UID || !hasTrackingFinalizer(p) {
			return errorf("owner %v finalizers %v", ref, p.Finalizers)
		}
		return nil
	})
	// One pod too many for parallelism 1: one is deleted, without counting.
	h.waitActive(j, 1)
	// A pod released by its Job (labels changed) loses the finalizer.
	survivor := h.activePods(j)[0]
	patch := []byte(`{"metadata":{"labels":{"batch.kubernetes.io/controller-uid":"other","controller-uid":"other"}}}`)
	if _, err := h.pods.Patch(context.Background(), survivor.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	h.eventually("released pod loses the finalizer", func() error {
		p, err := h.pods.Get(context.Background(), survivor.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if metav1.GetControllerOf(p) != nil || hasTrackingFinalizer(p) {
			return errorf("owner %v finalizers %v", metav1.GetControllerOf(p), p.Finalizers)
		}
		return nil
	})
	for range 2 {
		h.finish(h.waitActive(j, 1)[0], 0)
	}
	done := h.waitCondition("adopt", batchv1.JobComplete)
	if done.Status.Failed != 0 || done.Status.Succeeded != 2 {
		t.Errorf("status %+v", done.Status)
	}
	families, err := h.mgr.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			v := m.GetCounter().GetValue() + float64(m.GetHistogram().GetSampleCount())
			got[f.GetName()] += v
		}
	}
	for _, name := range []string{"job_controller_job_sync_duration_seconds", "job_controller_job_syncs_total",
		"job_controller_jobs_finished_total", "job_controller_job_pods_finished_total", "job_controller_job_pods_creation_total"} {
		if got[name] == 0 {
			t.Errorf("metric %s not recorded (%v)", name, got[name])
		}
	}
}

// workQueue: without completions, the first success ends the work; the
// pods still running finish, no new pod starts.
func workQueue(t *testing.T, h *harness) {
	j := newJob("queue", 1, 3)
	j.Spec.Completions = nil
	j = h.create(j)
	pods := h.waitActive(j, 3)
	h.finish(pods[0], 0)
	h.eventually("succeeded 1, active 2", func() error {
		if st := h.get("queue").Status; st.Succeeded != 1 || st.Active != 2 {
			return errorf("status %+v", st)
		}
		return nil
	})
	if trueCondition(h.get("queue"), batchv1.JobComplete) != nil {
		t.Fatal("complete while pods still run")
	}
	h.finish(pods[1], 0)
	h.finish(pods[2], 1)
	done := h.waitCondition("queue", batchv1.JobComplete)
	if st := done.Status; st.Succeeded != 2 || st.Failed != 1 || len(h.jobPods(j)) != 3 {
		t.Errorf("status %+v, %d pods", st, len(h.jobPods(j)))
	}
}
