package workqueue

import (
	"runtime"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func newFakeQueue(t *testing.T) (*Queue[string], *clocktesting.FakeClock) {
	t.Helper()
	clk := clocktesting.NewFakeClock(epoch)
	q := NewWithConfig[string](Config{Clock: clk})
	t.Cleanup(q.ShutDown)
	return q, clk
}

func TestAddAfter(t *testing.T) {
	tests := []struct {
		name string
		adds []struct {
			item string
			d    time.Duration
		}
		step time.Duration
		want []string // order of Get after step
	}{
		{"ready in time order", []struct {
			item string
			d    time.Duration
		}{{"c", 3 * time.Second}, {"a", time.Second}, {"b", 2 * time.Second}}, 5 * time.Second, []string{"a", "b", "c"}},
		{"equal times keep add order", []struct {
			item string
			d    time.Duration
		}{{"x", time.Second}, {"y", time.Second}, {"z", time.Second}}, time.Second, []string{"x", "y", "z"}},
		{"earliest of two delays wins", []struct {
			item string
			d    time.Duration
		}{{"a", 10 * time.Second}, {"b", 2 * time.Second}, {"a", time.Second}}, 2 * time.Second, []string{"a", "b"}},
		{"non-positive delay adds now", []struct {
			item string
			d    time.Duration
		}{{"a", 0}, {"b", -time.Second}}, 0, []string{"a", "b"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q, clk := newFakeQueue(t)
			for _, a := range tc.adds {
				q.AddAfter(a.item, a.d)
			}
			clk.Step(tc.step)
			q.moveReady() // the loop may or may not have done it already
			mustLen(t, q, len(tc.want))
			for _, w := range tc.want {
				mustGet(t, q, w)
			}
		})
	}
}

func TestAddAfterNotBeforeTime(t *testing.T) {
	q, clk := newFakeQueue(t)
	q.AddAfter("a", 10*time.Second)
	q.AddAfter("a", 20*time.Second) // later: ignored
	q.AddAfter("b", 20*time.Second)
	clk.Step(9 * time.Second)
	q.moveReady()
	mustLen(t, q, 0)
	clk.Step(time.Second)
	mustGet(t, q, "a") // delivered by the background loop
	q.Done("a")
	clk.Step(10 * time.Second)
	mustGet(t, q, "b")
	// "a" was due at most once: it moved with or before "b", so it would show.
	mustLen(t, q, 0)
}

func TestAddAfterEarlierEntryWakesLoop(t *testing.T) {
	q, clk := newFakeQueue(t)
	q.AddAfter("late", time.Hour)
	for !clk.HasWaiters() { // the loop armed its timer for the hour
		runtime.Gosched()
	}
	q.AddAfter("soon", time.Second)
	clk.Step(time.Second)
	mustGet(t, q, "soon") // needs the loop to notice the earlier entry
	mustLen(t, q, 0)
}

func TestAddAfterIgnoredAfterShutDown(t *testing.T) {
	q, clk := newFakeQueue(t)
	q.AddAfter("a", time.Second)
	q.ShutDown()
	q.AddAfter("b", 0)
	clk.Step(time.Second)
	if _, shutdown := q.Get(); !shutdown {
		t.Fatal("want shutdown: delayed and late adds are dropped")
	}
}
