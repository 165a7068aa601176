package workqueue

import (
	"runtime"
	"testing"
)

// mustGet gets one item and fails unless it is want.
func mustGet[T comparable](t *testing.T, q Interface[T], want T) {
	t.Helper()
	got, shutdown := q.Get()
	if shutdown || got != want {
		t.Fatalf("Get() = %v, %v; want %v, false", got, shutdown, want)
	}
}

func mustLen[T comparable](t *testing.T, q Interface[T], want int) {
	t.Helper()
	if got := q.Len(); got != want {
		t.Fatalf("Len() = %d, want %d", got, want)
	}
}

func TestQueueSemantics(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T, q *Queue[string])
	}{
		{"duplicate adds queue once, FIFO", func(t *testing.T, q *Queue[string]) {
			q.Add("a")
			q.Add("b")
			q.Add("a")
			mustLen(t, q, 2)
			mustGet(t, q, "a")
			mustGet(t, q, "b")
			mustLen(t, q, 0)
		}},
		{"add while processing requeues on Done", func(t *testing.T, q *Queue[string]) {
			q.Add("a")
			mustGet(t, q, "a")
			q.Add("a")
			q.Add("a")
			mustLen(t, q, 0) // held by a worker: not handed out again
			q.Done("a")
			mustLen(t, q, 1)
			mustGet(t, q, "a")
			q.Done("a")
			mustLen(t, q, 0)
			if n := len(q.states); n != 0 {
				t.Fatalf("states kept %d entries after all Done", n)
			}
		}},
		{"Done without Get is a no-op", func(t *testing.T, q *Queue[string]) {
			q.Done("x")
			q.Add("x")
			q.Done("x") // queued, not processing
			mustLen(t, q, 1)
			mustGet(t, q, "x")
		}},
		{"ShutDown hands out remaining items then reports shutdown", func(t *testing.T, q *Queue[string]) {
			q.Add("a")
			q.Add("b")
			q.ShutDown()
			if !q.ShuttingDown() {
				t.Fatal("ShuttingDown() = false after ShutDown")
			}
			q.Add("c") // dropped
			mustGet(t, q, "a")
			mustGet(t, q, "b")
			if _, shutdown := q.Get(); !shutdown {
				t.Fatal("Get after drain: shutdown = false")
			}
		}},
		{"dirty item is requeued by Done after ShutDown", func(t *testing.T, q *Queue[string]) {
			q.Add("a")
			mustGet(t, q, "a")
			q.Add("a")
			q.ShutDown()
			q.Done("a")
			mustGet(t, q, "a")
			q.Done("a")
			if _, shutdown := q.Get(); !shutdown {
				t.Fatal("want shutdown")
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := New[string]()
			defer q.ShutDown()
			tc.run(t, q)
		})
	}
}

func TestGetBlocksUntilAdd(t *testing.T) {
	q := New[int]()
	defer q.ShutDown()
	got := make(chan int)
	go func() {
		it, _ := q.Get()
		got <- it
	}()
	q.Add(7)
	if it := <-got; it != 7 {
		t.Fatalf("got %d, want 7", it)
	}
}

func TestShutDownWakesAllGetters(t *testing.T) {
	q := New[int]()
	const n = 4
	res := make(chan bool, n)
	for range n {
		go func() {
			_, shutdown := q.Get()
			res <- shutdown
		}()
	}
	q.ShutDown()
	for range n {
		if !<-res {
			t.Fatal("Get returned shutdown=false on an empty shut queue")
		}
	}
}

func TestShutDownWithDrainWaitsForDone(t *testing.T) {
	q := New[string]()
	q.Add("a")
	q.Add("b")
	mustGet(t, q, "a")
	drained := make(chan struct{})
	go func() {
		q.ShutDownWithDrain()
		close(drained)
	}()
	for !q.ShuttingDown() {
		runtime.Gosched()
	}
	// The queued "b" is still handed out while draining.
	mustGet(t, q, "b")
	q.Done("a")
	select {
	case <-drained:
		t.Fatal("drain finished while b was still processing")
	default:
	}
	q.Done("b")
	<-drained
	if _, shutdown := q.Get(); !shutdown {
		t.Fatal("want shutdown after drain")
	}
}

func TestShutDownEndsDrainEarly(t *testing.T) {
	q := New[string]()
	q.Add("a")
	mustGet(t, q, "a")
	drained := make(chan struct{})
	go func() {
		q.ShutDownWithDrain()
		close(drained)
	}()
	for !q.ShuttingDown() {
		runtime.Gosched()
	}
	q.ShutDown() // gives up waiting for "a"
	<-drained
	q.Done("a")
}

// As in client-go, Get reports shutdown as soon as a shut queue is empty,
// even if an item held by a worker is dirty; Done still queues that item and
// the drain ends once nothing is held.
func TestDrainWithRequeue(t *testing.T) {
	q := New[string]()
	q.Add("a")
	mustGet(t, q, "a")
	q.Add("a") // dirty while processing
	drained := make(chan struct{})
	go func() {
		q.ShutDownWithDrain()
		close(drained)
	}()
	for !q.ShuttingDown() {
		runtime.Gosched()
	}
	if _, shutdown := q.Get(); !shutdown {
		t.Fatal("Get on a shut, empty queue must report shutdown")
	}
	q.Done("a")
	<-drained
	mustGet(t, q, "a") // requeued by Done
	q.Done("a")
}

// The concrete types implement the interfaces users program against.
var (
	_ DelayingInterface[string]     = (*Queue[string])(nil)
	_ RateLimitingInterface[string] = (*RateLimitingQueue[string])(nil)
	_ RateLimiter[string]           = (*MaxOfRateLimiter[string])(nil)
	_ RateLimiter[string]           = (*BucketRateLimiter[string])(nil)
	_ MetricsProvider               = (*PrometheusMetricsProvider)(nil)
)
