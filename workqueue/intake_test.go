package workqueue

import (
	"sync"
	"testing"
)

// TestIntakeBatchesKeepOrderAndDedup adds more than several intake batches,
// with duplicates, and checks that the queue behaves as if every Add had been
// applied at once: Len counts distinct items, Get is FIFO, a duplicate of an
// item held by a worker is requeued on Done, and adds made before ShutDown
// are still handed out.
func TestIntakeBatchesKeepOrderAndDedup(t *testing.T) {
	q := New[int]()
	n := 3*intakeBatch + 5
	for i := range n {
		q.Add(i)
		q.Add(i / 2) // a duplicate of an item queued earlier
	}
	mustLen(t, q, n)
	mustGet(t, q, 0)
	q.Add(0) // held by this worker: queued again on Done
	q.Add(n) // still pending in the intake when ShutDown is called
	q.ShutDown()
	q.Add(n + 1) // after ShutDown: dropped
	q.Done(0)
	for i := 1; i <= n; i++ {
		mustGet(t, q, i)
		q.Done(i)
	}
	mustGet(t, q, 0)
	q.Done(0)
	if it, shutdown := q.Get(); !shutdown {
		t.Fatalf("Get() = %v, false after the queue emptied; want shutdown", it)
	}
	if len(q.states) != 0 {
		t.Fatalf("states kept %d entries after all Done", len(q.states))
	}
}

// TestIntakeWakesWaitingGets parks several Gets on an empty queue and checks
// that single Adds, each far below a batch, reach every one of them.
func TestIntakeWakesWaitingGets(t *testing.T) {
	const workers = 4
	q := New[int]()
	got := make(chan int, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			it, shutdown := q.Get()
			if shutdown {
				t.Error("Get reported shutdown before ShutDown")
				return
			}
			got <- it
			q.Done(it)
		}()
	}
	seen := map[int]bool{}
	for i := range workers {
		q.Add(i)
		seen[<-got] = true // blocks until a parked Get was woken
	}
	wg.Wait()
	q.ShutDown()
	if len(seen) != workers {
		t.Fatalf("got %d distinct items, want %d", len(seen), workers)
	}
}
