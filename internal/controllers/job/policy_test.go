package job

import (
	"context"
	"fmt"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// expectFailed waits for FailureTarget and Failed with reason and
// message, and the failure event.
func (h *harness) expectFailed(name, reason, msg string) *batchv1.Job {
	h.t.Helper()
	j := h.waitCondition(name, batchv1.JobFailed)
	ft, f := trueCondition(j, batchv1.JobFailureTarget), trueCondition(j, batchv1.JobFailed)
	if ft == nil || ft.Reason != reason || f.Reason != reason || f.Message != msg || ft.Message != msg {
		h.t.Errorf("job %s conditions %+v, want %s %q", name, j.Status.Conditions, reason, msg)
	}
	if j.Status.CompletionTime != nil || j.Status.Active != 0 {
		h.t.Errorf("failed job %s status %+v", name, j.Status)
	}
	if got := h.waitEvent(name, reason); got != msg {
		h.t.Errorf("event %s message %q, want %q", reason, got, msg)
	}
	return j
}

// staysWithout checks for a while that the Job gets no active pod.
func (h *harness) staysWithout(j *batchv1.Job) {
	h.t.Helper()
	time.Sleep(300 * time.Millisecond)
	if n := len(h.activePods(j)); n != 0 {
		h.t.Fatalf("job %s: %d active pods during back-off", j.Name, n)
	}
}

// policies runs one case per policy, each on its own Job.
func policies(t *testing.T, h *harness) {
	indexed := batchv1.IndexedCompletion
	for _, tc := range []struct {
		name string
		mod  func(*batchv1.Job)
		run  func(t *testing.T, j *batchv1.Job)
	}{{
		name: "backoff-limit",
		mod:  func(j *batchv1.Job) { j.Spec.BackoffLimit = new(int32(2)) },
		run: func(t *testing.T, j *batchv1.Job) {
			h.finish(h.waitActive(j, 1)[0], 1)
			h.staysWithout(j)
			h.clk.Step(DefaultPodFailureBackoff)
			h.nudge(j.Name)
			h.finish(h.waitActive(j, 1)[0], 1)
			// Two consecutive failures: 20 s.
			h.clk.Step(DefaultPodFailureBackoff)
			h.nudge(j.Name)
			h.staysWithout(j)
			h.clk.Step(DefaultPodFailureBackoff)
			h.nudge(j.Name)
			h.finish(h.waitActive(j, 1)[0], 1)
			done := h.expectFailed(j.Name, "BackoffLimitExceeded", "Job has reached the specified backoff limit")
			if done.Status.Failed != 3 || done.Status.Succeeded != 0 {
				t.Errorf("status %+v", done.Status)
			}
		},
	}, {
		name: "fail-job-rule",
		mod: func(j *batchv1.Job) {
			j.Spec.Completions, j.Spec.Parallelism = new(int32(2)), new(int32(2))
			// Bound pods are deleted gracefully: they stay terminating
			// until the (test's) kubelet finishes them.
			j.Spec.Template.Spec.NodeName = "node-1"
			j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
				Action:      batchv1.PodFailurePolicyActionFailJob,
				OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{42}},
			}}}
		},
		run: func(t *testing.T, j *batchv1.Job) {
			pods := h.waitActive(j, 2)
			h.finish(pods[0], 42)
			// The other pod is deleted and, under podReplacementPolicy
			// Failed, Failed waits for it to terminate.
			h.waitCondition(j.Name, batchv1.JobFailureTarget)
			h.eventually("other pod terminating", func() error {
				p, err := h.pods.Get(context.Background(), pods[1].Name, metav1.GetOptions{})
				if err != nil || p.DeletionTimestamp == nil {
					return fmt.Errorf("pod %v err %v", p, err)
				}
				return nil
			})
			if trueCondition(h.get(j.Name), batchv1.JobFailed) != nil {
				t.Fatal("Failed before the terminating pod finished")
			}
			if st := h.get(j.Name).Status; st.Terminating == nil || *st.Terminating != 1 {
				t.Errorf("terminating %v, want 1", st.Terminating)
			}
			h.finishTerminating(pods[1])
			msg := fmt.Sprintf("Container main for pod default/%s failed with exit code 42 matching FailJob rule at index 0", pods[0].Name)
			done := h.expectFailed(j.Name, "PodFailurePolicy", msg)
			if done.Status.Failed != 2 {
				t.Errorf("failed %d, want 2", done.Status.Failed)
			}
		},
	}, {
		name: "ignore-and-count-rules",
		mod: func(j *batchv1.Job) {
			j.Spec.BackoffLimit = new(int32(0))
			j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
				Action:          batchv1.PodFailurePolicyActionIgnore,
				OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue}},
			}, {
				Action:      batchv1.PodFailurePolicyActionCount,
				OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{5}},
			}}}
		},
		run: func(t *testing.T, j *batchv1.Job) {
			h.finish(h.waitActive(j, 1)[0], 137, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "EvictionByEvictionAPI"})
			h.clk.Step(DefaultPodFailureBackoff)
			h.nudge(j.Name)
			second := h.waitActive(j, 1)[0]
			if st := h.get(j.Name).Status; st.Failed != 0 {
				t.Fatalf("an ignored failure was counted: %+v", st)
			}
			h.finish(second, 5)
			done := h.expectFailed(j.Name, "BackoffLimitExceeded", "Job has reached the specified backoff limit")
			if done.Status.Failed != 1 {
				t.Errorf("failed %d, want 1", done.Status.Failed)
			}
		},
	}, {
		name: "backoff-limit-per-index",
		mod: func(j *batchv1.Job) {
			j.Spec.CompletionMode = &indexed
			j.Spec.Completions, j.Spec.Parallelism = new(int32(2)), new(int32(2))
			j.Spec.BackoffLimitPerIndex = new(int32(1))
		},
		run: func(t *testing.T, j *batchv1.Job) {
			pods := h.waitActive(j, 2)
			var zero, one *corev1.Pod
			for _, p := range pods {
				if completionIndex(p) == 0 {
					zero = p
				} else {
					one = p
				}
			}
			if zero.Annotations[batchv1.JobIndexFailureCountAnnotation] != "0" {
				t.Errorf("first pod failure count %q", zero.Annotations[batchv1.JobIndexFailureCountAnnotation])
			}
			h.finish(zero, 1)
			h.clk.Step(DefaultPodFailureBackoff)
			h.nudge(j.Name)
			var retry *corev1.Pod
			h.eventually("index 0 retried", func() error {
				for _, p := range h.activePods(j) {
					if completionIndex(p) == 0 {
						retry = p
						return nil
					}
				}
				return fmt.Errorf("no active pod for index 0")
			})
			if retry.Annotations[batchv1.JobIndexFailureCountAnnotation] != "1" {
				t.Errorf("retry failure count %q, want 1", retry.Annotations[batchv1.JobIndexFailureCountAnnotation])
			}
			h.finish(retry, 1)
			h.eventually("failedIndexes 0", func() error {
				if st := h.get(j.Name).Status; st.FailedIndexes == nil || *st.FailedIndexes != "0" {
					return fmt.Errorf("status %+v", st)
				}
				return nil
			})
			h.finish(one, 0)
			done := h.expectFailed(j.Name, "FailedIndexes", "Job has failed indexes")
			if done.Status.CompletedIndexes != "1" || done.Status.Failed != 2 || done.Status.Succeeded != 1 {
				t.Errorf("status %+v", done.Status)
			}
		},
	}, {
		name: "max-failed-indexes",
		mod: func(j *batchv1.Job) {
			j.Spec.CompletionMode = &indexed
			j.Spec.Completions, j.Spec.Parallelism = new(int32(3)), new(int32(3))
			j.Spec.BackoffLimitPerIndex, j.Spec.MaxFailedIndexes = new(int32(0)), new(int32(0))
		},
		run: func(t *testing.T, j *batchv1.Job) {
			h.finish(h.waitActive(j, 3)[0], 1)
			h.waitCondition(j.Name, batchv1.JobFailureTarget)
			for _, p := range h.jobPods(j) {
				if p.DeletionTimestamp != nil {
					h.finishTerminating(p)
				}
			}
			h.expectFailed(j.Name, "MaxFailedIndexesExceeded", "Job has exceeded the specified maximal number of failed indexes")
		},
	}, {
		name: "success-policy",
		mod: func(j *batchv1.Job) {
			j.Spec.CompletionMode = &indexed
			j.Spec.Completions, j.Spec.Parallelism = new(int32(3)), new(int32(3))
			j.Spec.SuccessPolicy = &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{{SucceededIndexes: new("0")}}}
		},
		run: func(t *testing.T, j *batchv1.Job) {
			for _, p := range h.waitActive(j, 3) {
				if completionIndex(p) == 0 {
					h.finish(p, 0)
				}
			}
			done := h.waitCondition(j.Name, batchv1.JobComplete)
			scm := trueCondition(done, batchv1.JobSuccessCriteriaMet)
			c := trueCondition(done, batchv1.JobComplete)
			if scm == nil || scm.Reason != "SuccessPolicy" || scm.Message != "Matched rules at index 0" || c.Reason != "SuccessPolicy" {
				t.Errorf("conditions %+v", done.Status.Conditions)
			}
			if done.Status.CompletedIndexes != "0" || done.Status.Succeeded != 1 || done.Status.CompletionTime == nil {
				t.Errorf("status %+v", done.Status)
			}
			if n := len(h.activePods(j)); n != 0 {
				t.Errorf("%d pods still active", n)
			}
		},
	}, {
		name: "active-deadline",
		mod:  func(j *batchv1.Job) { j.Spec.ActiveDeadlineSeconds = new(int64(30)) },
		run: func(t *testing.T, j *batchv1.Job) {
			h.waitActive(j, 1)
			h.eventually("startTime recorded", func() error {
				if st := h.get(j.Name).Status; st.StartTime == nil || st.Active != 1 {
					return fmt.Errorf("status %+v", st)
				}
				return nil
			})
			h.clk.Step(31 * time.Second)
			h.nudge(j.Name)
			done := h.expectFailed(j.Name, "DeadlineExceeded", "Job was active longer than specified deadline")
			if done.Status.Failed != 1 {
				t.Errorf("failed %d, want 1 (the deleted pod)", done.Status.Failed)
			}
		},
	}, {
		name: "suspend-resume",
		mod: func(j *batchv1.Job) {
			j.Spec.Suspend = new(true)
			j.Spec.Completions, j.Spec.Parallelism = new(int32(2)), new(int32(2))
		},
		run: func(t *testing.T, j *batchv1.Job) {
			s := h.waitCondition(j.Name, batchv1.JobSuspended)
			if c := trueCondition(s, batchv1.JobSuspended); c.Reason != "JobSuspended" || c.Message != "Job suspended" || s.Status.StartTime != nil {
				t.Errorf("suspended status %+v", s.Status)
			}
			h.staysWithout(j)
			h.clk.Step(time.Minute)
			h.mutate(j.Name, func(j *batchv1.Job) { j.Spec.Suspend = new(false) })
			h.waitActive(j, 2)
			h.eventually("resumed status", func() error {
				r := h.get(j.Name)
				c := findCondition(r.Status.Conditions, batchv1.JobSuspended)
				if c == nil || c.Status != corev1.ConditionFalse || c.Reason != "JobResumed" || c.Message != "Job resumed" ||
					r.Status.StartTime == nil || !r.Status.StartTime.Time.Equal(h.clk.Now()) {
					return fmt.Errorf("resumed status %+v", r.Status)
				}
				return nil
			})
			h.mutate(j.Name, func(j *batchv1.Job) { j.Spec.Suspend = new(true) })
			h.eventually("pods deleted", func() error {
				if n := len(h.jobPods(j)); n != 0 {
					return fmt.Errorf("%d pods", n)
				}
				return nil
			})
			// The condition may come with a pod still active: a sync that
			// could not delete every active pod writes it with the pods
			// left (kube-controller-manager's does too) and the next sync
			// deletes them. Wait for none active; then no deleted pod may
			// count as failed.
			h.eventually("suspended, none active", func() error {
				st := h.get(j.Name).Status
				if c := findCondition(st.Conditions, batchv1.JobSuspended); c == nil || c.Status != corev1.ConditionTrue || st.Active != 0 {
					return fmt.Errorf("status %+v", st)
				}
				return nil
			})
			if st := h.get(j.Name).Status; st.Failed != 0 {
				t.Errorf("suspend counted deleted pods: %+v", st)
			}
			h.waitEvent(j.Name, "Suspended")
			h.waitEvent(j.Name, "Resumed")
		},
	}, {
		name: "replace-only-failed",
		mod:  func(j *batchv1.Job) { j.Spec.PodReplacementPolicy = new(batchv1.Failed) },
		run: func(t *testing.T, j *batchv1.Job) {
			p := h.waitActive(j, 1)[0]
			if err := h.pods.Delete(context.Background(), p.Name, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			h.eventually("terminating 1", func() error {
				if st := h.get(j.Name).Status; st.Terminating == nil || *st.Terminating != 1 || st.Active != 0 {
					return fmt.Errorf("status %+v", st)
				}
				return nil
			})
			h.staysWithout(j)
			h.finishTerminating(p)
			h.eventually("failed 1", func() error {
				if st := h.get(j.Name).Status; st.Failed != 1 || *st.Terminating != 0 {
					return fmt.Errorf("status %+v", st)
				}
				return nil
			})
			h.clk.Step(DefaultPodFailureBackoff)
			h.nudge(j.Name)
			h.finish(h.waitActive(j, 1)[0], 0)
			h.waitCondition(j.Name, batchv1.JobComplete)
		},
	}, {
		name: "deleted-pod-counts-as-failed",
		run: func(t *testing.T, j *batchv1.Job) {
			p := h.waitActive(j, 1)[0]
			if err := h.pods.Delete(context.Background(), p.Name, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			h.eventually("failed 1, pod gone", func() error {
				st := h.get(j.Name).Status
				if _, err := h.pods.Get(context.Background(), p.Name, metav1.GetOptions{}); err == nil || st.Failed != 1 {
					return fmt.Errorf("status %+v, pod err %v", st, err)
				}
				return nil
			})
			h.clk.Step(DefaultPodFailureBackoff)
			h.nudge(j.Name)
			h.finish(h.waitActive(j, 1)[0], 0)
			done := h.waitCondition(j.Name, batchv1.JobComplete)
			if done.Status.Failed != 1 || done.Status.Succeeded != 1 {
				t.Errorf("status %+v", done.Status)
			}
		},
	}, {
		name: "on-failure-restarts",
		mod: func(j *batchv1.Job) {
			j.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
			j.Spec.BackoffLimit = new(int32(2))
		},
		run: func(t *testing.T, j *batchv1.Job) {
			p := h.waitActive(j, 1)[0]
			p.Status.Phase = corev1.PodRunning
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", Image: "busybox", RestartCount: 2,
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}
			if _, err := h.pods.UpdateStatus(context.Background(), p, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			for _, q := range h.jobPods(j) {
				h.eventually("pod deleted", func() error {
					if got, err := h.pods.Get(context.Background(), q.Name, metav1.GetOptions{}); err == nil && got.DeletionTimestamp == nil {
						return fmt.Errorf("pod %s not deleted", q.Name)
					}
					return nil
				})
			}
			h.expectFailed(j.Name, "BackoffLimitExceeded", "Job has reached the specified backoff limit")
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			j := newJob(tc.name, 1, 1)
			if tc.mod != nil {
				tc.mod(j)
			}
			tc.run(t, h.create(j))
		})
	}
}

// finishTerminating plays the kubelet for a pod being deleted: it reaches
// Failed.
func (h *harness) finishTerminating(p *corev1.Pod) {
	h.t.Helper()
	for range 20 {
		cur, err := h.pods.Get(context.Background(), p.Name, metav1.GetOptions{})
		if err != nil {
			return // gone already
		}
		now := metav1.NewTime(h.clk.Now())
		cur.Status.Phase = corev1.PodFailed
		cur.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", Image: "busybox",
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "Error", StartedAt: now, FinishedAt: now}}}}
		if _, err := h.pods.UpdateStatus(context.Background(), cur, metav1.UpdateOptions{}); err == nil {
			return
		}
	}
	h.t.Fatalf("could not fail pod %s", p.Name)
}
