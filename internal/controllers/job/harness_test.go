package job

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/internal/testwait"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/rest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const ns = "default"

// harness is a real API server, a manager running the Job controller on a
// fake clock (start, finish, back-off and deadline times), and the test's
// own client, which also plays the kubelet.
type harness struct {
	t      *testing.T
	srv    *testserver.Server
	clk    *clocktesting.FakeClock
	jobs   *rest.Resource[*batchv1.Job, *batchv1.JobList]
	pods   *rest.Resource[*corev1.Pod, *corev1.PodList]
	events *rest.Resource[*corev1.Event, *corev1.EventList]

	mu      sync.Mutex
	mgr     *manager.Manager
	r       *reconciler
	cancel  context.CancelFunc
	done    chan error
	stopped bool
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	srv := testserver.Start(t, testserver.Options{})
	c := srv.RESTClient(t)
	h := &harness{t: t, srv: srv, clk: clocktesting.NewFakeClock(time.Now().Truncate(time.Second)),
		jobs:   rest.For[*batchv1.Job, *batchv1.JobList](c, jobGVR, true).Namespace(ns),
		pods:   rest.For[*corev1.Pod, *corev1.PodList](c, podGVR, true).Namespace(ns),
		events: rest.For[*corev1.Event, *corev1.EventList](c, corev1.SchemeGroupVersion.WithResource("events"), true).Namespace(ns),
	}
	h.start()
	t.Cleanup(h.stop)
	return h
}

// start runs a new manager with a fresh controller (empty expectations
// and back-off records, as after a restart).
func (h *harness) start() {
	h.t.Helper()
	mgr, err := manager.New(manager.Options{Config: h.srv.RESTConfig(h.t), MetricsAddr: "0", HealthAddr: "0",
		Logger: testLogger()})
	if err != nil {
		h.t.Fatal(err)
	}
	ctrl, orphans, r, err := newControllers(mgr, Options{Clock: h.clk})
	if err != nil {
		h.t.Fatal(err)
	}
	if err := mgr.Add(ctrl); err != nil {
		h.t.Fatal(err)
	}
	if err := mgr.Add(orphans); err != nil {
		h.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	select {
	case <-mgr.Ready():
	case err := <-done:
		h.t.Fatalf("manager: %v", err)
	case <-time.After(30 * time.Second):
		h.t.Fatal("manager not ready")
	}
	h.mu.Lock()
	h.mgr, h.r, h.cancel, h.done, h.stopped = mgr, r, cancel, done, false
	h.mu.Unlock()
}

// stop stops the running manager and waits for it.
func (h *harness) stop() {
	h.mu.Lock()
	if h.stopped {
		h.mu.Unlock()
		return
	}
	h.stopped = true
	cancel, done, mgr := h.cancel, h.done, h.mgr
	h.mu.Unlock()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			h.t.Errorf("manager: %v", err)
		}
	case <-time.After(30 * time.Second):
		h.t.Error("manager did not stop")
	}
	mgr.Client().CloseIdleConnections()
}

// expectationsMet reports whether the running controller awaits no pod
// creation or deletion for j (or has waited past the TTL).
func (h *harness) expectationsMet(j *batchv1.Job) bool {
	h.mu.Lock()
	r := h.r
	h.mu.Unlock()
	return r.exp.SatisfiedExpectations(j.Namespace + "/" + j.Name)
}

// restart stops the controller and starts a new one once the server has
// finished the writes the old one gave up on.
func (h *harness) restart() {
	h.stop()
	h.srv.WaitWritesServed(h.t)
	h.start()
}

func newJob(name string, completions, parallelism int32) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: batchv1.JobSpec{
			Completions: &completions, Parallelism: &parallelism,
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "main", Image: "busybox"}},
			}},
		},
	}
}

func (h *harness) create(j *batchv1.Job) *batchv1.Job {
	h.t.Helper()
	out, err := h.jobs.Create(context.Background(), j, metav1.CreateOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	return out
}

func (h *harness) get(name string) *batchv1.Job {
	h.t.Helper()
	j, err := h.jobs.Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	return j
}

// mutate applies fn to the Job, retrying on conflict.
func (h *harness) mutate(name string, fn func(*batchv1.Job)) {
	h.t.Helper()
	for range 20 {
		j := h.get(name)
		fn(j)
		if _, err := h.jobs.Update(context.Background(), j, metav1.UpdateOptions{}); err == nil {
			return
		}
	}
	h.t.Fatalf("update of job %s kept conflicting", name)
}

// nudge makes the controller sync the Job again (after the fake clock
// moved), by touching an annotation.
func (h *harness) nudge(name string) {
	h.t.Helper()
	patch := fmt.Sprintf(`{"metadata":{"annotations":{"test/nudge":"%d"}}}`, time.Now().UnixNano())
	if _, err := h.jobs.Patch(context.Background(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		h.t.Fatal(err)
	}
}

// jobPods lists the Job's pods (all phases, terminating ones included).
func (h *harness) jobPods(j *batchv1.Job) []*corev1.Pod {
	h.t.Helper()
	list, err := h.pods.List(context.Background(), metav1.ListOptions{LabelSelector: batchv1.ControllerUidLabel + "=" + string(j.UID)})
	if err != nil {
		h.t.Fatal(err)
	}
	out := make([]*corev1.Pod, len(list.Items))
	for i := range list.Items {
		out[i] = &list.Items[i]
	}
	return out
}

// activePods are the Job's pods neither terminal nor terminating.
func (h *harness) activePods(j *batchv1.Job) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range h.jobPods(j) {
		if p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			out = append(out, p)
		}
	}
	return out
}

// waitActive waits until the Job has exactly n active pods.
func (h *harness) waitActive(j *batchv1.Job, n int) []*corev1.Pod {
	h.t.Helper()
	var pods []*corev1.Pod
	h.eventually(fmt.Sprintf("%s with %d active pods", j.Name, n), func() error {
		pods = h.activePods(j)
		if len(pods) != n {
			return fmt.Errorf("%d active pods", len(pods))
		}
		return nil
	})
	return pods
}

// finish plays the kubelet: the pod's container terminates with exitCode
// at the fake clock's now, and the pod reaches Succeeded (0) or Failed.
// It returns false if the pod changed meanwhile (conflict) or is gone.
func (h *harness) finish(p *corev1.Pod, exitCode int32, conds ...corev1.PodCondition) bool {
	h.t.Helper()
	now := metav1.NewTime(h.clk.Now())
	cp, err := h.pods.Get(context.Background(), p.Name, metav1.GetOptions{})
	if err != nil || cp.UID != p.UID || cp.DeletionTimestamp != nil || cp.Status.Phase == corev1.PodSucceeded || cp.Status.Phase == corev1.PodFailed {
		return false
	}
	cp.Status.Phase = corev1.PodSucceeded
	reason := "Completed"
	if exitCode != 0 {
		cp.Status.Phase = corev1.PodFailed
		reason = "Error"
	}
	cp.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", Image: "busybox",
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: exitCode, Reason: reason, StartedAt: now, FinishedAt: now}}}}
	cp.Status.Conditions = append([]corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse,
		LastTransitionTime: now, Reason: "PodCompleted"}}, conds...)
	_, err = h.pods.UpdateStatus(context.Background(), cp, metav1.UpdateOptions{})
	return err == nil
}

// setReady marks a running pod Ready.
func (h *harness) setReady(p *corev1.Pod) {
	h.t.Helper()
	cp := p.DeepCopy()
	cp.Status.Phase = corev1.PodRunning
	cp.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue,
		LastTransitionTime: metav1.NewTime(h.clk.Now())}}
	if _, err := h.pods.UpdateStatus(context.Background(), cp, metav1.UpdateOptions{}); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) eventually(what string, cond func() error) {
	h.t.Helper()
	testwait.UntilEvery(h.t, 20*time.Second, 20*time.Millisecond, what, cond)
}

// waitCondition waits for a true condition of type t and returns the Job.
func (h *harness) waitCondition(name string, t batchv1.JobConditionType) *batchv1.Job {
	h.t.Helper()
	var j *batchv1.Job
	h.eventually(fmt.Sprintf("job %s %s", name, t), func() error {
		j = h.get(name)
		if trueCondition(j, t) == nil {
			return fmt.Errorf("conditions %+v, status %+v", j.Status.Conditions, j.Status)
		}
		return nil
	})
	return j
}

// eventReasons counts the reasons of the Events about the Job.
func (h *harness) eventReasons(name string) map[string]string {
	h.t.Helper()
	list, err := h.events.List(context.Background(), metav1.ListOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range list.Items {
		if e.InvolvedObject.Kind == "Job" && e.InvolvedObject.Name == name {
			out[e.Reason] = e.Message
		}
	}
	return out
}

// waitEvent waits for an Event with reason about the Job and returns its
// message.
func (h *harness) waitEvent(name, reason string) string {
	h.t.Helper()
	var msg string
	h.eventually("event "+reason, func() error {
		m, ok := h.eventReasons(name)[reason]
		if !ok {
			return fmt.Errorf("no %s event", reason)
		}
		msg = m
		return nil
	})
	return msg
}

func fmtErr(format string, args ...any) error { return fmt.Errorf(format, args...) }

// testLogger discards logs unless JOB_TEST_LOG is set.
func testLogger() *slog.Logger {
	if os.Getenv("JOB_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}
