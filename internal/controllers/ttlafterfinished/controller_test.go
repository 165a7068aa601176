package ttlafterfinished

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"testing"
	"time"

	"go.uber.org/goleak"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/internal/testwait"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/rest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type env struct {
	t    *testing.T
	clk  *clocktesting.FakeClock
	jobs *rest.Resource[*batchv1.Job, *batchv1.JobList]
	// deletes records the delete options the controller sent.
}

func newEnv(t *testing.T) *env {
	t.Helper()
	srv := testserver.Start(t, testserver.Options{})
	clk := clocktesting.NewFakeClock(time.Now().Truncate(time.Second))
	mgr, err := manager.New(manager.Options{Config: srv.RESTConfig(t), MetricsAddr: "0", HealthAddr: "0",
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if err := Add(mgr, Options{Clock: clk}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
		mgr.Client().CloseIdleConnections()
	})
	c := srv.RESTClient(t)
	return &env{t: t, clk: clk, jobs: rest.For[*batchv1.Job, *batchv1.JobList](c, jobGVR, true).Namespace("default")}
}

// finishedJob creates a Job and writes a finished status (as the Job
// controller would) with the condition's lastTransitionTime at finish.
func (e *env) finishedJob(name string, ttl *int32, cond batchv1.JobConditionType, finish time.Time) *batchv1.Job {
	e.t.Helper()
	j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: batchv1.JobSpec{
		TTLSecondsAfterFinished: ttl,
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}},
	}}
	j, err := e.jobs.Create(context.Background(), j, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	at := metav1.NewTime(finish)
	start := metav1.NewTime(finish.Add(-time.Second))
	j.Status.StartTime = &start
	interim := batchv1.JobSuccessCriteriaMet
	reason := "CompletionsReached"
	if cond == batchv1.JobFailed {
		interim, reason = batchv1.JobFailureTarget, "BackoffLimitExceeded"
		j.Status.Failed = 1
	} else {
		j.Status.Succeeded = 1
		j.Status.CompletionTime = &at
	}
	j.Status.Conditions = []batchv1.JobCondition{
		{Type: interim, Status: corev1.ConditionTrue, Reason: reason, LastTransitionTime: at, LastProbeTime: at},
		{Type: cond, Status: corev1.ConditionTrue, Reason: reason, LastTransitionTime: at, LastProbeTime: at},
	}
	if j, err = e.jobs.UpdateStatus(context.Background(), j, metav1.UpdateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	return j
}

// exists reports whether the Job is there and not being deleted. No
// garbage collector runs here, so a Job deleted with propagationPolicy
// Foreground stays, with a deletionTimestamp and the foregroundDeletion
// finalizer: that is the proof of the policy.
func (e *env) exists(name string) bool {
	e.t.Helper()
	j, err := e.jobs.Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		e.t.Fatalf("job %s was deleted without propagationPolicy Foreground", name)
	}
	if err != nil {
		e.t.Fatal(err)
	}
	if j.DeletionTimestamp != nil {
		if !slices.Contains(j.Finalizers, metav1.FinalizerDeleteDependents) {
			e.t.Fatalf("job %s deleted with finalizers %v, want %s", name, j.Finalizers, metav1.FinalizerDeleteDependents)
		}
		return false
	}
	return true
}

func (e *env) waitGone(name string) {
	e.t.Helper()
	testwait.UntilEvery(e.t, 20*time.Second, 20*time.Millisecond, "job "+name+" deleted",
		testwait.Bool(func() bool { return !e.exists(name) }))
}

func (e *env) staysFor(name string, d time.Duration) {
	e.t.Helper()
	time.Sleep(d)
	if !e.exists(name) {
		e.t.Fatalf("job %s was deleted before its TTL", name)
	}
}

func (e *env) touch(name string) {
	e.t.Helper()
	patch := fmt.Sprintf(`{"metadata":{"annotations":{"test/touch":"%d"}}}`, time.Now().UnixNano())
	if _, err := e.jobs.Patch(context.Background(), name, "application/merge-patch+json", []byte(patch), metav1.PatchOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

func TestDeletesAfterTTL(t *testing.T) {
	e := newEnv(t)
	now := e.clk.Now()
	e.finishedJob("done", new(int32(60)), batchv1.JobComplete, now)
	e.finishedJob("failed", new(int32(0)), batchv1.JobFailed, now)
	e.finishedJob("no-ttl", nil, batchv1.JobComplete, now.Add(-time.Hour))
	running := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "running"}, Spec: batchv1.JobSpec{
		TTLSecondsAfterFinished: new(int32(0)),
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}}}
	if _, err := e.jobs.Create(context.Background(), running, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// TTL 0: deleted at once.
	e.waitGone("failed")
	e.staysFor("done", 300*time.Millisecond)
	// Raising the TTL is honoured: the live object is rechecked.
	e.clk.Step(59 * time.Second)
	e.touch("done")
	e.staysFor("done", 300*time.Millisecond)
	e.clk.Step(2 * time.Second)
	e.touch("done")
	e.waitGone("done")
	if !e.exists("no-ttl") || !e.exists("running") {
		t.Fatal("a Job without a TTL or not finished was deleted")
	}
}

func TestRaisedTTLIsHonoured(t *testing.T) {
	e := newEnv(t)
	e.finishedJob("raised", new(int32(10)), batchv1.JobComplete, e.clk.Now())
	for range 20 {
		j, err := e.jobs.Get(context.Background(), "raised", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		j.Spec.TTLSecondsAfterFinished = new(int32(100))
		if _, err = e.jobs.Update(context.Background(), j, metav1.UpdateOptions{}); err == nil {
			break
		}
	}
	e.clk.Step(11 * time.Second)
	e.touch("raised")
	e.staysFor("raised", 300*time.Millisecond)
	e.clk.Step(90 * time.Second)
	e.touch("raised")
	e.waitGone("raised")
}

func TestExpiry(t *testing.T) {
	finish := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	j := &batchv1.Job{Spec: batchv1.JobSpec{TTLSecondsAfterFinished: new(int32(30))},
		Status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{
			{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(finish.Add(-time.Hour))},
			{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(finish)}}}}
	at, err := expiry(j)
	if err != nil || at == nil || !at.Equal(finish.Add(30*time.Second)) {
		t.Fatalf("expiry = %v, %v", at, err)
	}
	j.Status.Conditions[1].Status = corev1.ConditionFalse
	if needsCleanup(j) {
		t.Fatal("a Job whose Complete condition is False needs no cleanup")
	}
}
