package cronjob

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/setpoint-dev/setpoint/controller"
	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/internal/testwait"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/rest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// harness is a real API server, a manager running the controller on a
// fake clock, and a separate client for the test's own reads and writes.
type harness struct {
	// ns is the test's namespace.
	ns       string
	t        *testing.T
	clk      *clocktesting.FakeClock
	mgr      *manager.Manager
	r        *reconciler
	ctrl     *controller.Controller
	cronJobs *rest.Resource[*batchv1.CronJob, *batchv1.CronJobList]
	jobs     *rest.Resource[*batchv1.Job, *batchv1.JobList]
	events   *rest.Resource[*corev1.Event, *corev1.EventList]
	stopOnce sync.Once
	cancel   context.CancelFunc
	done     chan error
}

// newHarness runs a controller against srv for one test, in a namespace
// of its own (named after the test); the test's end stops the controller
// and deletes the namespace's CronJobs, so that the next test's controller
// does not see them.
func newHarness(t *testing.T, srv *testserver.Server) *harness {
	t.Helper()
	ns := strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
	nsObj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
	if _, err := rest.For[*corev1.Namespace, *corev1.NamespaceList](srv.RESTClient(t), corev1.SchemeGroupVersion.WithResource("namespaces"), false).
		Create(context.Background(), nsObj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	mgr, err := manager.New(manager.Options{Config: srv.RESTConfig(t), MetricsAddr: "0", HealthAddr: "0",
		Logger: testLogger()})
	if err != nil {
		t.Fatal(err)
	}
	// The fake clock starts at the real time: the server stamps
	// creationTimestamp with it, and the controller counts from there
	// (create keeps the clock from lagging behind that stamp).
	clk := clocktesting.NewFakeClock(time.Now())
	ctrl, r, err := newController(mgr, Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	if err := mgr.Add(ctrl); err != nil {
		t.Fatal(err)
	}
	c := srv.RESTClient(t)
	h := &harness{t: t, ns: ns, clk: clk, mgr: mgr, r: r, ctrl: ctrl, done: make(chan error, 1),
		cronJobs: rest.For[*batchv1.CronJob, *batchv1.CronJobList](c, cronJobGVR, true).Namespace(ns),
		jobs:     rest.For[*batchv1.Job, *batchv1.JobList](c, jobGVR, true).Namespace(ns),
		events:   rest.For[*corev1.Event, *corev1.EventList](c, corev1.SchemeGroupVersion.WithResource("events"), true).Namespace(ns),
	}
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	go func() { h.done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		h.stop()
		if err := h.cronJobs.DeleteCollection(context.Background(), metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
			t.Errorf("delete cronjobs: %v", err)
		}
	})
	return h
}

func (h *harness) stop() {
	h.stopOnce.Do(func() {
		h.cancel()
		select {
		case err := <-h.done:
			if err != nil {
				h.t.Errorf("manager: %v", err)
			}
		case <-time.After(30 * time.Second):
			h.t.Error("manager did not stop")
		}
		h.mgr.Client().CloseIdleConnections()
	})
}

func newCronJob(name, schedule string) *batchv1.CronJob {
	return &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: batchv1.CronJobSpec{
			Schedule: schedule,
			JobTemplate: batchv1.JobTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"cron": name},
					Annotations: map[string]string{"note": "from-template"}},
				Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers:    []corev1.Container{{Name: "c", Image: "busybox"}},
				}}},
			},
		},
	}
}

// create creates the CronJob and brings the fake clock up to its
// creationTimestamp.
func (h *harness) create(cj *batchv1.CronJob) *batchv1.CronJob {
	h.t.Helper()
	out, err := h.cronJobs.Create(context.Background(), cj, metav1.CreateOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	h.catchUp(out.CreationTimestamp.Time)
	return out
}

// catchUp steps the fake clock to t if it is behind. The server stamps
// creationTimestamp on the real clock, which runs on after the fake one
// started; the controller, as Kubernetes', schedules only times after that
// stamp. A fake clock left behind it would make a test's next minute one
// the CronJob never runs at, whenever the real time crossed a minute
// between the harness's start and the create.
func (h *harness) catchUp(t time.Time) {
	if d := t.Sub(h.clk.Now()); d > 0 {
		h.clk.Step(d)
	}
}

func (h *harness) get(name string) *batchv1.CronJob {
	h.t.Helper()
	cj, err := h.cronJobs.Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	return cj
}

// mutate applies fn to the current CronJob, retrying on conflict.
func (h *harness) mutate(name string, fn func(*batchv1.CronJob)) {
	h.t.Helper()
	for range 20 {
		cj := h.get(name)
		fn(cj)
		if _, err := h.cronJobs.Update(context.Background(), cj, metav1.UpdateOptions{}); err == nil {
			return
		}
	}
	h.t.Fatalf("update of %s kept conflicting", name)
}

// jobsOf lists, from the server, the Jobs controlled by the CronJob.
func (h *harness) jobsOf(cj *batchv1.CronJob) []batchv1.Job {
	h.t.Helper()
	list, err := h.jobs.List(context.Background(), metav1.ListOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	var out []batchv1.Job
	for _, j := range list.Items {
		if metav1.IsControlledBy(&j, cj) {
			out = append(out, j)
		}
	}
	return out
}

// finish writes a Job's status as the Job controller does when it ends:
// Complete (with SuccessCriteriaMet) or Failed (with FailureTarget),
// startTime and, for Complete, completionTime at the fake clock's time.
func (h *harness) finish(name string, complete bool) {
	h.t.Helper()
	for range 20 {
		j, err := h.jobs.Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			h.t.Fatal(err)
		}
		now := metav1.NewTime(h.clk.Now())
		cond := func(t batchv1.JobConditionType, reason string) batchv1.JobCondition {
			return batchv1.JobCondition{Type: t, Status: corev1.ConditionTrue, Reason: reason,
				LastProbeTime: now, LastTransitionTime: now}
		}
		j.Status.StartTime = &now
		if complete {
			j.Status.Succeeded = 1
			j.Status.CompletionTime = &now
			j.Status.Conditions = append(j.Status.Conditions, cond(batchv1.JobSuccessCriteriaMet, "CompletionsReached"),
				cond(batchv1.JobComplete, "CompletionsReached"))
		} else {
			j.Status.Failed = 1
			j.Status.Conditions = append(j.Status.Conditions, cond(batchv1.JobFailureTarget, "BackoffLimitExceeded"),
				cond(batchv1.JobFailed, "BackoffLimitExceeded"))
		}
		_, err = h.jobs.UpdateStatus(context.Background(), j, metav1.UpdateOptions{})
		if err == nil {
			return
		}
		h.t.Logf("finish %s: %v", name, err)
	}
	h.t.Fatalf("status update of job %s kept failing", name)
}

// eventually polls cond every 20ms until it returns nil or 20 s pass.
func (h *harness) eventually(what string, cond func() error) {
	h.t.Helper()
	testwait.UntilEvery(h.t, 20*time.Second, 20*time.Millisecond, what, cond)
}

// events returns the messages of the events about the CronJob, by reason.
func (h *harness) eventsOf(name string) map[string][]string {
	h.t.Helper()
	list, err := h.events.List(context.Background(), metav1.ListOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	out := map[string][]string{}
	for _, e := range list.Items {
		if e.InvolvedObject.Kind == "CronJob" && e.InvolvedObject.Name == name {
			out[e.Reason] = append(out[e.Reason], e.Message)
		}
	}
	return out
}

func (h *harness) waitEvent(name, reason, message string) {
	h.t.Helper()
	h.eventually(fmt.Sprintf("event %s %q on %s", reason, message, name), func() error {
		for _, m := range h.eventsOf(name)[reason] {
			if message == "" || m == message {
				return nil
			}
		}
		return fmt.Errorf("events: %v", h.eventsOf(name))
	})
}

// step advances the fake clock by d and waits until the controller has
// settled.
func (h *harness) step(d time.Duration) {
	h.t.Helper()
	h.settle()
	h.clk.Step(d)
	h.settle()
}

// nextMinute is the first whole minute after the fake clock's time.
func (h *harness) nextMinute() time.Time {
	return h.clk.Now().Truncate(time.Minute).Add(time.Minute)
}

// toNextMinute steps the fake clock to 1 s past the next whole minute and
// returns that minute.
func (h *harness) toNextMinute() time.Time {
	h.t.Helper()
	m := h.nextMinute()
	h.step(m.Add(time.Second).Sub(h.clk.Now()))
	return m
}

// settle waits until no sync runs and no request is ready in the queue for
// 60 ms running: the work the current fake time causes is done, and the
// requeues at future schedule times wait on the fake clock.
func (h *harness) settle() {
	h.t.Helper()
	quiet := 0
	testwait.Until(h.t, 20*time.Second, "controller settled", func() error {
		if h.r.syncing.Load() == 0 && h.ctrl.Queue().Len() == 0 {
			quiet++
		} else {
			quiet = 0
		}
		if quiet < 6 {
			return fmt.Errorf("quiet for %d polls in a row, want 6", quiet)
		}
		return nil
	})
}

// testLogger logs the controller's errors to stderr when CRONJOB_LOG is set.
func testLogger() *slog.Logger {
	if os.Getenv("CRONJOB_LOG") == "" {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
}
