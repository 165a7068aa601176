package workqueue

import (
	"testing"
	"time"
)

func TestPriorityOrder(t *testing.T) {
	type add struct {
		item string
		prio int
	}
	tests := []struct {
		name string
		adds []add
		want []string
	}{
		{"live events overtake resync", []add{{"r1", LowPriority}, {"r2", LowPriority}, {"live", 0}, {"urgent", 10}},
			[]string{"urgent", "live", "r1", "r2"}},
		{"FIFO within a priority", []add{{"a", 1}, {"b", 2}, {"c", 1}, {"d", 2}}, []string{"b", "d", "a", "c"}},
		{"re-add at higher priority raises", []add{{"a", LowPriority}, {"b", LowPriority}, {"c", 0}, {"b", 5}},
			[]string{"b", "c", "a"}},
		{"re-add at lower priority does not demote", []add{{"a", 0}, {"b", LowPriority}, {"a", LowPriority}},
			[]string{"a", "b"}},
		{"raise twice leaves one live entry", []add{{"a", 0}, {"a", 1}, {"a", 2}, {"b", 0}}, []string{"a", "b"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := New[string]()
			for _, a := range tc.adds {
				q.AddWithOpts(AddOpts{Priority: a.prio}, a.item)
			}
			mustLen(t, q, len(tc.want))
			for _, w := range tc.want {
				mustGet(t, q, w)
			}
			q.ShutDown()
			if it, shutdown := q.Get(); !shutdown {
				t.Fatalf("stale entry handed out: %q", it)
			}
		})
	}
}

func TestPriorityKeptForRequeueOnDone(t *testing.T) {
	q := New[string]()
	defer q.ShutDown()
	q.Add("a")
	mustGet(t, q, "a")
	q.AddWithOpts(AddOpts{Priority: LowPriority}, "a")
	q.AddWithOpts(AddOpts{Priority: 5}, "a") // highest while dirty wins
	q.Add("b")
	q.Done("a")
	mustGet(t, q, "a")
	mustGet(t, q, "b")
}

func TestPriorityWithDelay(t *testing.T) {
	q, clk := newFakeQueue(t)
	q.Add("now")
	q.AddWithOpts(AddOpts{Priority: 3, After: time.Second}, "later")
	mustLen(t, q, 1)
	clk.Step(time.Second)
	q.moveReady()
	mustGet(t, q, "later")
	mustGet(t, q, "now")
}
