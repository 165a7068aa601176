package controller_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/controller"
	"github.com/setpoint-dev/setpoint/reconcile"
)

var (
	cmGR        = schema.GroupResource{Resource: "configmaps"}
	errInvalid  = apierrors.NewInvalid(schema.GroupKind{Kind: "ConfigMap"}, "a", field.ErrorList{field.Invalid(field.NewPath("metadata", "labels"), "-x", "bad")})
	errBad      = apierrors.NewBadRequest("bad patch")
	errForbid   = apierrors.NewForbidden(cmGR, "a", errors.New("no"))
	errNotFound = apierrors.NewNotFound(cmGR, "a")
)

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want controller.ErrorClass
	}{
		{reconcile.TerminalError(errInvalid), controller.ClassTerminal},
		{apierrors.NewConflict(cmGR, "a", errors.New("stale")), controller.ClassConflict},
		{fmt.Errorf("update: %w", errInvalid), controller.ClassInvalid},
		{errBad, controller.ClassBadRequest},
		{errForbid, controller.ClassForbidden},
		{fmt.Errorf("get: %w", errNotFound), controller.ClassNotFound},
		{apierrors.NewAlreadyExists(cmGR, "a"), controller.ClassOther},
		{apierrors.NewTooManyRequests("slow down", 1), controller.ClassOther},
		{errors.New("dial tcp: refused"), controller.ClassOther},
	} {
		if got := controller.Classify(tc.err); got != tc.want {
			t.Errorf("Classify(%v) = %s, want %s", tc.err, got, tc.want)
		}
	}
}

// errorCount reads controller_runtime_reconcile_errors_total of one class.
func (h *harness) errorCount(class controller.ErrorClass) float64 {
	h.t.Helper()
	mfs, err := h.reg.Gather()
	if err != nil {
		h.t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "controller_runtime_reconcile_errors_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "class" && l.GetValue() == string(class) {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	h.t.Fatalf("no errors series of class %q", class)
	return 0
}

func TestInvalidAndBadRequestAreNotRetried(t *testing.T) {
	h := newHarness(t, 1)
	a, b, c := rq("a"), rq("b"), rq("c")
	h.c.Queue().Add(a)
	h.expect(a, fail(fmt.Errorf("update configmap: %w", errInvalid)))
	h.c.Queue().Add(b)
	h.expect(b, fail(errBad))
	waitFor(t, "both counted", func() bool {
		return metricValue(t, h.reg, "controller_runtime_terminal_reconcile_errors_total") == 2
	})
	if h.errorCount(controller.ClassInvalid) != 1 || h.errorCount(controller.ClassBadRequest) != 1 {
		t.Fatalf("errors by class: invalid %v, bad_request %v; want 1 each",
			h.errorCount(controller.ClassInvalid), h.errorCount(controller.ClassBadRequest))
	}
	// After the longest backoff neither comes back; c is next.
	h.clk.Step(time.Hour)
	h.c.Queue().Add(c)
	h.expect(c, ok(reconcile.Result{}))
	h.none("after not-retried errors")
}

func TestForbiddenAndNotFoundRetriedByDefault(t *testing.T) {
	h := newHarness(t, 1)
	a := rq("a")
	h.c.Queue().Add(a)
	h.expect(a, fail(errForbid))
	h.waitTimer()
	h.clk.Step(5 * time.Millisecond)
	h.expect(a, fail(errNotFound))
	h.waitTimer()
	h.clk.Step(10 * time.Millisecond)
	h.expect(a, ok(reconcile.Result{}))
	if h.errorCount(controller.ClassForbidden) != 1 || h.errorCount(controller.ClassNotFound) != 1 {
		t.Fatal("forbidden and not_found errors not counted once each")
	}
}

func TestForbiddenAndNotFoundNotRetriedWhenConfigured(t *testing.T) {
	h := newHarnessWith(t, controller.Options{NotRetried: []controller.ErrorClass{
		controller.ClassForbidden, controller.ClassNotFound}})
	a, b, c := rq("a"), rq("b"), rq("c")
	h.c.Queue().Add(a)
	h.expect(a, fail(errForbid))
	h.c.Queue().Add(b)
	h.expect(b, fail(errNotFound))
	waitFor(t, "both given up", func() bool {
		return metricValue(t, h.reg, "controller_runtime_terminal_reconcile_errors_total") == 2
	})
	h.clk.Step(time.Hour)
	h.c.Queue().Add(c)
	// NotRetried replaced the default: a 422 is retried now.
	h.expect(c, fail(errInvalid))
	h.waitTimer()
	h.clk.Step(5 * time.Millisecond)
	h.expect(c, ok(reconcile.Result{}))
	h.none("after configured classes")
}

// recorded is an event a fakeRecorder got.
type recorded struct {
	ref                        *corev1.ObjectReference
	eventtype, reason, message string
}

// fakeRecorder keeps the events it is given (the controller's only use of
// a recorder is the drop event; package record is tested on its own).
type fakeRecorder struct {
	mu     sync.Mutex
	events []recorded
}

func (r *fakeRecorder) Event(obj runtime.Object, eventtype, reason, message string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, recorded{ref: obj.(*corev1.ObjectReference), eventtype: eventtype, reason: reason, message: message})
}

func (r *fakeRecorder) Eventf(obj runtime.Object, eventtype, reason, format string, args ...any) {
	r.Event(obj, eventtype, reason, fmt.Sprintf(format, args...))
}

func (r *fakeRecorder) AnnotatedEventf(obj runtime.Object, _ map[string]string, eventtype, reason, format string, args ...any) {
	r.Eventf(obj, eventtype, reason, format, args...)
}

func (r *fakeRecorder) list() []recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]recorded(nil), r.events...)
}

func TestMaxRetriesDropsTheRequestWithAnEvent(t *testing.T) {
	rec := &fakeRecorder{}
	h := newHarnessWith(t, controller.Options{MaxRetries: 2, Recorder: rec,
		ObjectKind: corev1.SchemeGroupVersion.WithKind("ConfigMap")})
	a, b := rq("a"), rq("b")
	boom := errors.New("backend unavailable")
	h.c.Queue().Add(a)
	h.expect(a, fail(boom)) // failure 1: retried after 5ms
	h.waitTimer()
	h.clk.Step(5 * time.Millisecond)
	h.expect(a, fail(boom)) // failure 2: retried after 10ms
	h.waitTimer()
	h.clk.Step(10 * time.Millisecond)
	h.expect(a, fail(boom)) // failure 3 = 2 retries spent: dropped
	waitFor(t, "drop counted", func() bool {
		return metricValue(t, h.reg, "controller_runtime_reconcile_retries_exhausted_total") == 1
	})
	if n := h.c.Queue().NumRequeues(a); n != 0 {
		t.Fatalf("dropped request keeps %d failures on record", n)
	}
	h.clk.Step(time.Hour)
	h.c.Queue().Add(b)
	h.expect(b, ok(reconcile.Result{}))
	h.none("after the drop")
	evs := rec.list()
	if len(evs) != 1 {
		t.Fatalf("events = %+v, want one", evs)
	}
	ev := evs[0]
	if ev.ref.Kind != "ConfigMap" || ev.ref.APIVersion != "v1" || ev.ref.Namespace != "ns" || ev.ref.Name != "a" ||
		ev.eventtype != corev1.EventTypeWarning || ev.reason != controller.ReasonMaxRetriesExceeded {
		t.Fatalf("event = %+v %+v", ev, ev.ref)
	}
	if want := "test controller gave up after 3 failed reconciles: backend unavailable"; ev.message != want {
		t.Fatalf("message = %q, want %q", ev.message, want)
	}
	// A new event for a starts it afresh, with a full budget.
	h.c.Queue().Add(a)
	h.expect(a, fail(boom))
	h.waitTimer()
	h.clk.Step(5 * time.Millisecond)
	h.expect(a, ok(reconcile.Result{}))
}
