package testwait

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestPollReturnsOnceTheConditionHolds(t *testing.T) {
	calls := 0
	err := Poll(context.Background(), time.Minute, time.Millisecond, func() error {
		calls++
		if calls < 3 {
			return fmt.Errorf("call %d", calls)
		}
		return nil
	})
	if err != nil || calls != 3 {
		t.Fatalf("Poll: %v after %d calls, want nil after 3", err, calls)
	}
}

// TestPollAsksAtTheDeadline: a wait that times out asks the condition a
// last time at the deadline, not earlier, and wraps its last answer.
func TestPollAsksAtTheDeadline(t *testing.T) {
	const timeout = 60 * time.Millisecond
	start := time.Now()
	var last time.Time
	calls := 0
	err := Poll(context.Background(), timeout, 25*time.Millisecond, func() error {
		calls++
		last = time.Now()
		return fmt.Errorf("answer %d", calls)
	})
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("answer %d", calls)) ||
		!strings.Contains(err.Error(), "within 60ms") {
		t.Fatalf("Poll: %v, want the timeout and the last answer (%d)", err, calls)
	}
	if last.Sub(start) < timeout {
		t.Fatalf("last asked %v after the start, before the %v deadline", last.Sub(start), timeout)
	}
}

// TestPollNeverPausesPastTheDeadline: an interval longer than the timeout
// is cut at the deadline.
func TestPollNeverPausesPastTheDeadline(t *testing.T) {
	start := time.Now()
	calls := 0
	err := Poll(context.Background(), 30*time.Millisecond, time.Hour, func() error { calls++; return ErrNotYet })
	if !errors.Is(err, ErrNotYet) || calls != 2 {
		t.Fatalf("Poll: %v after %d calls, want ErrNotYet after 2 (at once and at the deadline)", err, calls)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("Poll waited %v for a 30ms timeout", d)
	}
}

func TestPollEndsWithTheContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	err := Poll(ctx, time.Hour, time.Hour, func() error { return errors.New("still 3 pods") })
	if err == nil || !strings.Contains(err.Error(), "context canceled") || !strings.Contains(err.Error(), "still 3 pods") {
		t.Fatalf("Poll: %v, want the cancellation and the last answer", err)
	}
}

// fakeT records a failure of Until (which ends the goroutine, as testing's
// FailNow does) and has its own context.
type fakeT struct {
	testing.TB
	ctx    context.Context
	failed string
}

func (f *fakeT) Helper()                  {}
func (f *fakeT) Context() context.Context { return f.ctx }
func (f *fakeT) Fatalf(format string, args ...any) {
	f.failed = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// run calls fn with a fakeT on a goroutine of its own, so a Fatalf ends
// that goroutine only, and returns the failure ("" if none).
func run(t *testing.T, ctx context.Context, fn func(tb testing.TB)) string {
	ft := &fakeT{TB: t, ctx: ctx}
	var wg sync.WaitGroup
	wg.Go(func() { fn(ft) })
	wg.Wait()
	return ft.failed
}

func TestUntilFailsWithWhatAndTheLastAnswer(t *testing.T) {
	n := 0
	msg := run(t, context.Background(), func(tb testing.TB) {
		UntilEvery(tb, 30*time.Millisecond, time.Millisecond, "deployment web available", func() error {
			n++
			return fmt.Errorf("%d of 3 replicas", n)
		})
	})
	want := fmt.Sprintf("%d of 3 replicas", n)
	if !strings.HasPrefix(msg, "deployment web available: not reached within 30ms") || !strings.HasSuffix(msg, want) {
		t.Fatalf("failure %q, want the wait's name, timeout and last answer %q", msg, want)
	}
}

func TestUntilReturnsTheTimeWaited(t *testing.T) {
	start := time.Now()
	waited := Until(t, time.Minute, "a moment", Bool(func() bool { return time.Since(start) > 20*time.Millisecond }))
	if waited < 20*time.Millisecond || waited > time.Since(start) {
		t.Fatalf("Until returned %v, waited %v", waited, time.Since(start))
	}
}

// TestUntilAfterTheTestContextEnded: in a cleanup (the test's context has
// ended) a wait still runs to its condition or deadline.
func TestUntilAfterTheTestContextEnded(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	calls := 0
	msg := run(t, ctx, func(tb testing.TB) {
		Until(tb, time.Minute, "third call", Bool(func() bool { calls++; return calls == 3 }))
	})
	if msg != "" || calls != 3 {
		t.Fatalf("failure %q after %d calls, want none after 3", msg, calls)
	}
}

// TestUntilGivesUpWhenTheTestEnds: a wait running when the test's context
// ends fails at once with the last answer.
func TestUntilGivesUpWhenTheTestEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	msg := run(t, ctx, func(tb testing.TB) {
		Until(tb, time.Hour, "never", Reason(func() string { return "nothing yet" }))
	})
	if !strings.HasPrefix(msg, "never: gave up after") || !strings.HasSuffix(msg, "nothing yet") {
		t.Fatalf("failure %q", msg)
	}
}

func TestAdapters(t *testing.T) {
	for _, tc := range []struct {
		name string
		cond func() error
		want string // "" for nil
	}{
		{"bool true", Bool(func() bool { return true }), ""},
		{"bool false", Bool(func() bool { return false }), ErrNotYet.Error()},
		{"reason empty", Reason(func() string { return "" }), ""},
		{"reason", Reason(func() string { return "2 pods left" }), "2 pods left"},
		{"check ok", Check(func() (bool, string) { return true, "ignored" }), ""},
		{"check why", Check(func() (bool, string) { return false, "no lease" }), "no lease"},
		{"check no why", Check(func() (bool, string) { return false, "" }), ErrNotYet.Error()},
	} {
		err := tc.cond()
		if got := fmt.Sprint(err); (err == nil) != (tc.want == "") || (err != nil && got != tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestPollSteppingStepsBetweenWindows: the condition holds at the third
// fake tick; it is polled at once, each step is followed by a window, and
// no step happens once it holds.
func TestPollSteppingStepsBetweenWindows(t *testing.T) {
	ticks, polls := 0, 0
	err := PollStepping(context.Background(), 10, 5*time.Millisecond, time.Millisecond,
		func() { ticks++ },
		func() error {
			polls++
			if ticks < 3 {
				return fmt.Errorf("tick %d", ticks)
			}
			return nil
		})
	if err != nil || ticks != 3 {
		t.Fatalf("PollStepping: %v after %d steps, want nil after 3", err, ticks)
	}
	if polls < 4 {
		t.Fatalf("%d polls for 3 steps, want one window (at least one poll) per round", polls)
	}
}

// TestPollSteppingGivesUpAfterRounds: rounds windows, rounds-1 steps, and
// the error names the rounds and wraps the last answer.
func TestPollSteppingGivesUpAfterRounds(t *testing.T) {
	ticks := 0
	err := PollStepping(context.Background(), 4, 2*time.Millisecond, time.Millisecond,
		func() { ticks++ },
		func() error { return fmt.Errorf("tick %d", ticks) })
	if ticks != 3 {
		t.Fatalf("%d steps for 4 rounds, want 3", ticks)
	}
	if err == nil || !strings.Contains(err.Error(), "within 4 rounds of 2ms") || !strings.HasSuffix(err.Error(), "tick 3") {
		t.Fatalf("PollStepping: %v, want the rounds and the last answer", err)
	}
}

func TestPollSteppingEndsWithTheContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	err := PollStepping(ctx, 1000, time.Hour, time.Hour, func() { t.Error("stepped after the context ended") },
		func() error { return errors.New("still pending") })
	if err == nil || !strings.Contains(err.Error(), "context canceled") || !strings.Contains(err.Error(), "still pending") {
		t.Fatalf("PollStepping: %v, want the cancellation and the last answer", err)
	}
}
