package watchcache

import (
	"errors"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/watch"
	testingclock "k8s.io/utils/clock/testing"
)

// sleepHookClock is a fake clock whose Sleep advances it (as FakeClock's
// does) and then calls onSleep, on the sleeping goroutine.
type sleepHookClock struct {
	*testingclock.FakeClock
	mu      sync.Mutex
	onSleep func()
}

func (c *sleepHookClock) Sleep(d time.Duration) {
	c.FakeClock.Sleep(d)
	c.mu.Lock()
	hook := c.onSleep
	c.mu.Unlock()
	if hook != nil {
		hook()
	}
}

func (c *sleepHookClock) setOnSleep(fn func()) {
	c.mu.Lock()
	c.onSleep = fn
	c.mu.Unlock()
}

// slowEnv is a cache on a sleepHookClock whose dispatch waits up to a
// minute of that clock for a full watcher; nothing else in it runs on
// the clock within that time.
func slowEnv(t *testing.T) (*env, *sleepHookClock) {
	clk := &sleepHookClock{FakeClock: testingclock.NewFakeClock(time.Unix(1_000_000, 0))}
	e := newEnv(t, configMaps, func(c *Config) {
		c.Clock = clk
		c.SlowWatcherWait = time.Minute
		c.ProgressTimeout = time.Hour
	}, func(e *env) {
		e.create(cmKey("a", "k"), configMap("a", "k", nil, "0"))
	})
	return e, clk
}

// dispatched waits until the cache dispatched rev (sync without
// WaitForRevision, whose timer runs on the fake clock).
func (e *env) dispatched(rev int64) {
	e.t.Helper()
	waitUntil(e.t, "dispatch of "+strconv.FormatInt(rev, 10), func() bool {
		e.cache.wmu.Lock()
		defer e.cache.wmu.Unlock()
		return e.cache.dispatchedRev >= rev
	})
}

// TestSlowWatcherWaitRunsOnTheClock: a dispatch that finds watchers' buffers
// full waits for them on the cache's clock, up to SlowWatcherWait for the
// event (one budget shared by every watcher it waits for), then ends them.
// A minute of waiting passes on the fake clock, not in the test.
func TestSlowWatcherWaitRunsOnTheClock(t *testing.T) {
	e, clk := slowEnv(t)
	from := e.cache.Revision()
	ws := []*Watcher{
		e.watch(WatchOptions{Mode: FromRevision, ResourceVersion: from, BufferSize: 2}),
		e.watch(WatchOptions{Mode: FromRevision, ResourceVersion: from, BufferSize: 2}),
	}
	start, realStart := clk.Now(), time.Now()
	var rev int64
	for i := range 3 { // the third update finds both buffers full
		rev = e.update(cmKey("a", "k"), configMap("a", "k", nil, strconv.Itoa(i+1)))
	}
	e.dispatched(rev)
	if waited := clk.Since(start); waited != time.Minute {
		t.Fatalf("the dispatch waited %v on the clock, want the one-minute budget once", waited)
	}
	if d := time.Since(realStart); d > 30*time.Second {
		t.Fatalf("the dispatch took %v of real time for a minute of the fake clock", d)
	}
	for i, w := range ws {
		var types []watch.EventType
		for f := range w.Frames() {
			types = append(types, f.Type)
		}
		want := []watch.EventType{watch.Modified, watch.Modified, watch.Error}
		if !slices.Equal(types, want) || !errors.Is(w.Err(), ErrWatcherTooSlow) {
			t.Fatalf("watcher %d: frames %v, Err %v; want %v and ErrWatcherTooSlow", i, types, w.Err(), want)
		}
	}
	if n := e.cache.Metrics().WatchersTooSlow; n != 2 {
		t.Fatalf("WatchersTooSlow = %d, want 2", n)
	}
}

// TestSlowWatcherReadingWithinTheBudgetKeepsItsWatch: a watcher that
// reads one frame 59 s (of the cache's clock) into the dispatch's wait
// keeps its watch and gets every event in order; the dispatch waited
// exactly until then.
func TestSlowWatcherReadingWithinTheBudgetKeepsItsWatch(t *testing.T) {
	e, clk := slowEnv(t)
	from := e.cache.Revision()
	w := e.watch(WatchOptions{Mode: FromRevision, ResourceVersion: from, BufferSize: 2})
	start := clk.Now()
	var got []Frame
	clk.setOnSleep(func() {
		if len(got) == 0 && clk.Since(start) >= 59*time.Second {
			got = append(got, recv(w)) // room, at the last moment
		}
	})
	var revs []int64
	for i := range 3 {
		revs = append(revs, e.update(cmKey("a", "k"), configMap("a", "k", nil, strconv.Itoa(i+1))))
	}
	e.dispatched(revs[2])
	if waited := clk.Since(start); waited != 59*time.Second {
		t.Fatalf("the dispatch waited %v on the clock, want 59s (until the reader made room)", waited)
	}
	clk.setOnSleep(nil)
	got = append(got, recv(w), recv(w))
	for i, f := range got {
		if f.Type != watch.Modified || f.Revision != revs[i] {
			t.Fatalf("frame %d: %s at %d, want MODIFIED at %d", i, f.Type, f.Revision, revs[i])
		}
	}
	expectNone(t, w)
	if w.Err() != nil || e.cache.Metrics().WatchersTooSlow != 0 {
		t.Fatalf("the watcher that made room in time was ended: %v", w.Err())
	}
}
