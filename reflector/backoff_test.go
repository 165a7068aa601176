package reflector_test

import (
	"context"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/setpoint-dev/setpoint/internal/testwait"
	"github.com/setpoint-dev/setpoint/reflector"
)

// timedLW passes calls to the real accessor and notes when each was made
// on the test's fake clock.
type timedLW struct {
	inner *cmResource
	clock *testingclock.FakeClock

	mu             sync.Mutex
	lists, watches []time.Time
}

func (l *timedLW) List(ctx context.Context, opts metav1.ListOptions) (*corev1.ConfigMapList, error) {
	l.mu.Lock()
	l.lists = append(l.lists, l.clock.Now())
	l.mu.Unlock()
	return l.inner.List(ctx, opts)
}

func (l *timedLW) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	l.mu.Lock()
	l.watches = append(l.watches, l.clock.Now())
	l.mu.Unlock()
	return l.inner.Watch(ctx, opts)
}

func (l *timedLW) times() (lists, watches []time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]time.Time(nil), l.lists...), append([]time.Time(nil), l.watches...)
}

// advance steps the fake clock by step whenever the reflector is waiting
// on it, until done holds. Since the clock only moves while a timer is
// pending, the fake time between two calls is the wait the reflector
// chose, rounded up to step.
func advance(t *testing.T, fc *testingclock.FakeClock, step time.Duration, done func() bool) {
	t.Helper()
	testwait.UntilEvery(t, 30*time.Second, 100*time.Microsecond, "advancing the fake clock", func() error {
		for !done() {
			if !fc.HasWaiters() {
				return testwait.ErrNotYet
			}
			fc.Step(step)
		}
		return nil
	})
}

// With the server unreachable, list attempts are spaced by the backoff:
// 800ms doubling up to a 30s base, each wait within [base, 2*base) (jitter
// 1.0). Once the reflector has been healthy for more than two minutes, the
// next failure waits ~800ms again.
func TestBackoffGrowsWithJitterAndResets(t *testing.T) {
	const step = 10 * time.Millisecond
	h := newHarness(t, nil)
	fc := testingclock.NewFakeClock(time.Now())
	lw := &timedLW{inner: h.cms, clock: fc}
	sink := &recorder{}
	h.tcp.SetDown(true)
	r := reflector.New[*corev1.ConfigMap](lw, sink, reflector.Options{
		WatchList: falsePtr(), Selectors: onlyTestObjects, Clock: fc, Logger: testLogger(),
	})
	running(t, r.Run)

	bases := []time.Duration{800 * time.Millisecond, 1600 * time.Millisecond, 3200 * time.Millisecond,
		6400 * time.Millisecond, 12800 * time.Millisecond, 25600 * time.Millisecond, 30 * time.Second, 30 * time.Second}
	advance(t, fc, step, func() bool { lists, _ := lw.times(); return len(lists) == len(bases)+1 })
	lists, _ := lw.times()
	jittered := 0
	for i, base := range bases {
		gap := lists[i+1].Sub(lists[i])
		if gap < base || gap >= 2*base+step {
			t.Errorf("wait %d = %v, want in [%v, %v)", i+1, gap, base, 2*base)
		}
		if gap > base+base/50 {
			jittered++
		}
		t.Logf("wait %d: %v (base %v)", i+1, gap, base)
	}
	if jittered == 0 {
		t.Error("no wait carries jitter")
	}
	if err := r.LastError(); err == nil {
		t.Error("LastError = nil while the server is unreachable")
	}

	// The server comes back: the pending wait ends, the list succeeds.
	h.tcp.SetDown(false)
	advance(t, fc, step, func() bool { _, w := lw.times(); return len(w) == 1 })
	eventually(t, "the replace", func() bool { return sink.count("replace") == 1 })
	if err := r.LastError(); err != nil {
		t.Errorf("LastError = %v after a successful list", err)
	}

	// Healthy for over two minutes, then cut off again.
	fc.Step(2*time.Minute + time.Second)
	cut := fc.Now()
	h.tcp.SetDown(true)
	advance(t, fc, step, func() bool { _, w := lw.times(); return len(w) == 3 })
	_, watches := lw.times()
	marks := []time.Time{cut, watches[1], watches[2]}
	var gaps []time.Duration
	for i := 1; i < len(marks); i++ {
		if g := marks[i].Sub(marks[i-1]); g > 0 {
			gaps = append(gaps, g)
		}
	}
	t.Logf("waits after the reset: %v", gaps)
	// A clean end of the cut watch is resumed at once (no wait); the
	// failures that follow back off from 800ms again.
	if len(gaps) == 0 || gaps[0] < 800*time.Millisecond || gaps[0] >= 1600*time.Millisecond+step {
		t.Errorf("waits after two healthy minutes = %v, want the first in [800ms, 1.6s)", gaps)
	}
	if len(gaps) == 2 && (gaps[1] < 1600*time.Millisecond || gaps[1] >= 3200*time.Millisecond+step) {
		t.Errorf("second wait after the reset = %v, want in [1.6s, 3.2s)", gaps[1])
	}
	if n := len(lists); sink.count("replace") != 1 {
		t.Errorf("%d replaces after %d lists, want 1 (a failed watch resumes without relisting)", sink.count("replace"), n)
	}
}

// Cancelling the context ends Run at once, even in the middle of a
// backoff wait that the (fake) clock will never finish.
func TestRunReturnsWhenCancelledDuringBackoff(t *testing.T) {
	h := newHarness(t, nil)
	fc := testingclock.NewFakeClock(time.Now())
	h.tcp.SetDown(true)
	r := reflector.New[*corev1.ConfigMap](h.cms, &recorder{}, reflector.Options{Clock: fc, Logger: testLogger()})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.Run(ctx)
	}()
	eventually(t, "a backoff wait", fc.HasWaiters)
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after cancellation")
	}
	if r.LastError() == nil {
		t.Error("LastError = nil after failed attempts")
	}
}
