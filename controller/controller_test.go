package controller_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/setpoint-dev/setpoint/controller"
	"github.com/setpoint-dev/setpoint/internal/testwait"
	"github.com/setpoint-dev/setpoint/reconcile"
)

// failSafe bounds waits that only run out when the code under test is
// broken; passing runs never approach it.
const failSafe = 20 * time.Second

// call is one reconcile, held until the test answers it.
type call struct {
	req    reconcile.Request
	ctx    context.Context
	answer chan func() (reconcile.Result, error)
}

// stepper is a reconciler whose every call the test observes and answers.
type stepper struct{ calls chan call }

func (s *stepper) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	c := call{req: req, ctx: ctx, answer: make(chan func() (reconcile.Result, error))}
	s.calls <- c
	return (<-c.answer)()
}

type harness struct {
	t     *testing.T
	clk   *clocktesting.FakeClock
	c     *controller.Controller
	rec   *stepper
	reg   *prometheus.Registry
	stop  context.CancelFunc
	ended chan error
}

func newHarness(t *testing.T, workers int) *harness {
	t.Helper()
	return newHarnessWith(t, controller.Options{MaxConcurrentReconciles: workers})
}

// newHarnessWith runs a controller with opts plus the harness's clock,
// metrics and logger.
func newHarnessWith(t *testing.T, opts controller.Options) *harness {
	t.Helper()
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	reg := prometheus.NewRegistry()
	m, err := controller.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	rec := &stepper{calls: make(chan call)}
	opts.Clock, opts.Metrics, opts.Logger = clk, m, slog.New(slog.DiscardHandler)
	c, err := controller.New("test", rec, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := &harness{t: t, clk: clk, c: c, rec: rec, reg: reg, stop: cancel, ended: make(chan error, 1)}
	go func() { h.ended <- c.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		// Answer any reconcile still arriving so that Start can drain.
		for {
			select {
			case cl := <-rec.calls:
				cl.answer <- func() (reconcile.Result, error) { return reconcile.Result{}, nil }
			case err := <-h.ended:
				if err != nil {
					t.Errorf("Start: %v", err)
				}
				return
			case <-time.After(failSafe):
				t.Error("controller did not stop")
				return
			}
		}
	})
	return h
}

// next waits for the next reconcile call.
func (h *harness) next() call {
	h.t.Helper()
	select {
	case c := <-h.rec.calls:
		return c
	case <-time.After(failSafe):
		h.t.Fatal("no reconcile call")
		return call{}
	}
}

// none asserts that no reconcile call is pending right now.
func (h *harness) none(what string) {
	h.t.Helper()
	select {
	case c := <-h.rec.calls:
		h.t.Fatalf("%s: unexpected reconcile of %v", what, c.req)
	default:
	}
}

// expect waits for a call of req and answers it with f.
func (h *harness) expect(req reconcile.Request, f func() (reconcile.Result, error)) {
	h.t.Helper()
	c := h.next()
	if c.req != req {
		h.t.Fatalf("reconciled %v, want %v", c.req, req)
	}
	c.answer <- f
}

// waitTimer waits until the delaying queue has armed its timer on the fake
// clock, so a Step cannot race with it.
func (h *harness) waitTimer() {
	h.t.Helper()
	testwait.UntilEvery(h.t, failSafe, time.Millisecond, "queue waiting on the clock", testwait.Bool(h.clk.HasWaiters))
}

func rq(name string) reconcile.Request {
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: name}}
}

func fail(err error) func() (reconcile.Result, error) {
	return func() (reconcile.Result, error) { return reconcile.Result{}, err }
}

func ok(res reconcile.Result) func() (reconcile.Result, error) {
	return func() (reconcile.Result, error) { return res, nil }
}

func (h *harness) counter(result string) float64 {
	h.t.Helper()
	mfs, err := h.reg.Gather()
	if err != nil {
		h.t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "controller_runtime_reconcile_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "result" && l.GetValue() == result {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	h.t.Fatalf("no series for result %q", result)
	return 0
}

// waitFor polls cond (state the worker updates right after answering).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testwait.UntilEvery(t, failSafe, time.Millisecond, what, testwait.Bool(cond))
}

func TestErrorsBackOffExponentially(t *testing.T) {
	h := newHarness(t, 1)
	a := rq("a")
	h.c.Queue().Add(a)
	boom := errors.New("boom")
	h.expect(a, fail(boom))
	for i, d := range []time.Duration{5 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond, 40 * time.Millisecond} {
		waitFor(t, "failure recorded", func() bool { return h.c.Queue().NumRequeues(a) == i+1 })
		h.waitTimer()
		h.clk.Step(d - time.Microsecond)
		h.none("before the backoff elapsed")
		h.clk.Step(time.Microsecond)
		h.expect(a, fail(boom))
	}
	waitFor(t, "failure recorded", func() bool { return h.c.Queue().NumRequeues(a) == 5 })
	h.waitTimer()
	h.clk.Step(80 * time.Millisecond)
	h.expect(a, ok(reconcile.Result{}))
	waitFor(t, "history forgotten on success", func() bool { return h.c.Queue().NumRequeues(a) == 0 })
	if got := h.counter("error"); got != 5 {
		t.Fatalf("error results = %v, want 5", got)
	}
	if got := h.counter("success"); got != 1 {
		t.Fatalf("success results = %v, want 1", got)
	}
}

func TestTerminalErrorIsNotRetried(t *testing.T) {
	h := newHarness(t, 1)
	a, b := rq("a"), rq("b")
	h.c.Queue().Add(a)
	h.expect(a, fail(reconcile.TerminalError(errors.New("invalid spec"))))
	waitFor(t, "terminal counted", func() bool {
		return metricValue(t, h.reg, "controller_runtime_terminal_reconcile_errors_total") == 1
	})
	if n := h.c.Queue().NumRequeues(a); n != 0 {
		t.Fatalf("terminal error left %d failures on record", n)
	}
	// Even after the longest backoff, a is not reconciled again: b is next.
	h.clk.Step(time.Hour)
	h.c.Queue().Add(b)
	h.expect(b, ok(reconcile.Result{}))
	h.none("after a terminal error")
}

func TestConflictRetriesAtOnceThenBacksOff(t *testing.T) {
	h := newHarness(t, 1)
	a := rq("a")
	conflict := apierrors.NewConflict(schema.GroupResource{Resource: "configmaps"}, "a", errors.New("stale"))
	h.c.Queue().Add(a)
	for i := range controller.MaxImmediateConflictRetries {
		// No clock step: the retry is immediate.
		h.expect(a, fail(conflict))
		waitFor(t, "conflict counted", func() bool { return h.c.Queue().NumRequeues(a) == i+1 })
	}
	// The sixth conflict in a row backs off: 5ms * 2^5 = 160ms.
	h.expect(a, fail(conflict))
	waitFor(t, "conflict counted", func() bool { return h.c.Queue().NumRequeues(a) == controller.MaxImmediateConflictRetries+1 })
	h.waitTimer()
	h.clk.Step(160*time.Millisecond - time.Microsecond)
	h.none("conflict past the immediate budget")
	h.clk.Step(time.Microsecond)
	h.expect(a, ok(reconcile.Result{}))
	if got := h.counter("error"); got != float64(controller.MaxImmediateConflictRetries+1) {
		t.Fatalf("error results = %v", got)
	}
}

func TestRequeueAfterAndRequeue(t *testing.T) {
	h := newHarness(t, 1)
	a := rq("a")
	h.c.Queue().Add(a)
	h.expect(a, fail(errors.New("first")))
	waitFor(t, "failure", func() bool { return h.c.Queue().NumRequeues(a) == 1 })
	h.waitTimer()
	h.clk.Step(5 * time.Millisecond)
	// RequeueAfter forgets the failure and comes back after exactly a minute.
	h.expect(a, ok(reconcile.Result{RequeueAfter: time.Minute}))
	waitFor(t, "forgotten", func() bool { return h.c.Queue().NumRequeues(a) == 0 })
	h.waitTimer()
	h.clk.Step(time.Minute - time.Millisecond)
	h.none("before RequeueAfter")
	h.clk.Step(time.Millisecond)
	// Requeue goes through the rate limiter.
	h.expect(a, ok(reconcile.Result{Requeue: true}))
	waitFor(t, "requeue counted", func() bool { return h.c.Queue().NumRequeues(a) == 1 })
	h.waitTimer()
	h.clk.Step(5 * time.Millisecond)
	h.expect(a, ok(reconcile.Result{}))
	waitFor(t, "metrics", func() bool { return h.counter("success") == 1 })
	if h.counter("requeue_after") != 1 || h.counter("requeue") != 1 || h.counter("error") != 1 {
		t.Fatal("result counters")
	}
}

func TestPanicIsRecoveredAndRetried(t *testing.T) {
	h := newHarness(t, 1)
	a := rq("a")
	h.c.Queue().Add(a)
	h.expect(a, func() (reconcile.Result, error) { panic("nil map") })
	waitFor(t, "panic counted as failure", func() bool { return h.c.Queue().NumRequeues(a) == 1 })
	if got := metricValue(t, h.reg, "controller_runtime_reconcile_panics_total"); got != 1 {
		t.Fatalf("panics = %v", got)
	}
	h.waitTimer()
	h.clk.Step(5 * time.Millisecond)
	h.expect(a, ok(reconcile.Result{}))
}

func TestShutdownWaitsForInFlightReconcile(t *testing.T) {
	h := newHarness(t, 2)
	a, b := rq("a"), rq("b")
	h.c.Queue().Add(a)
	c := h.next()
	h.stop()
	select {
	case <-c.ctx.Done():
	case <-time.After(failSafe):
		t.Fatal("in-flight reconcile's context not cancelled")
	}
	h.c.Queue().Add(b) // after shutdown: dropped
	select {
	case err := <-h.ended:
		t.Fatalf("Start returned (%v) while a reconcile was in flight", err)
	default:
	}
	c.answer <- ok(reconcile.Result{})
	select {
	case err := <-h.ended:
		if err != nil {
			t.Fatal(err)
		}
		h.ended <- nil // for the cleanup
	case <-time.After(failSafe):
		t.Fatal("Start did not return after the drain")
	}
	h.none("after shutdown")
}

func TestNew(t *testing.T) {
	if _, err := controller.New("", reconcile.Func(nil), controller.Options{}); err == nil {
		t.Fatal("empty name accepted")
	}
	if _, err := controller.New("x", nil, controller.Options{}); err == nil {
		t.Fatal("nil reconciler accepted")
	}
	c, err := controller.New("x", reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
		return reconcile.Result{}, nil
	}), controller.Options{})
	if err != nil || c.Name() != "x" || !c.NeedLeaderElection() {
		t.Fatalf("New: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatalf("Start on a cancelled context: %v", err)
	}
	if err := c.Start(ctx); err == nil {
		t.Fatal("second Start accepted")
	}
}

// metricValue reads the single series of a per-controller counter.
func metricValue(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	t.Fatalf("metric %s not found", name)
	return 0
}
