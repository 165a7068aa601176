package job

import (
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestNonIndexedRunsToCompletion(t *testing.T) {
	h := newHarness(t)
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

func TestIndexedPods(t *testing.T) {
	h := newHarness(t)
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

var _ = corev1.PodRunning
