package workqueue

import (
	"sync"
	"sync/atomic"
	"testing"
)

// TestStress runs many producers and workers against one queue under the
// race detector and checks the two promises that matter to controllers:
// no item is held by two workers at once, and every add is followed by a
// processing that started after it (nothing is lost). The rate-limited run
// retries every third add through a limiter that never delays, so failure
// counts and Forgets travel through the intake with the adds.
func TestStress(t *testing.T) {
	t.Run("plain", func(t *testing.T) { runStress(t, nil) })
	t.Run("rate-limited", func(t *testing.T) {
		runStress(t, NewRateLimiting[int](NewExponentialRateLimiter[int](0, 0), Config{}))
	})
}

// runStress stresses rl's queue, or a plain queue if rl is nil.
func runStress(t *testing.T, rl *RateLimitingQueue[int]) {
	const (
		keys      = 64
		producers = 8
		workers   = 8
		addsEach  = 3000
	)
	var q *Queue[int]
	if rl != nil {
		q = rl.Queue
	} else {
		q = New[int]()
	}
	var (
		held    [keys]atomic.Int32 // 1 while a worker holds the key
		version [keys]atomic.Int64 // bumped before every Add of the key
		seen    [keys]atomic.Int64 // highest version a worker observed after Get
		errs    atomic.Int64
	)
	var wwg sync.WaitGroup
	for range workers {
		wwg.Add(1)
		go func() {
			defer wwg.Done()
			for {
				k, shutdown := q.Get()
				if shutdown {
					return
				}
				if !held[k].CompareAndSwap(0, 1) {
					errs.Add(1)
				}
				v := version[k].Load()
				for {
					s := seen[k].Load()
					if v <= s || seen[k].CompareAndSwap(s, v) {
						break
					}
				}
				held[k].Store(0)
				if rl != nil {
					rl.Forget(k)
				}
				q.Done(k)
			}
		}()
	}
	var pwg sync.WaitGroup
	for p := range producers {
		pwg.Add(1)
		go func() {
			defer pwg.Done()
			for i := range addsEach {
				k := (i*7 + p*13) % keys
				version[k].Add(1)
				switch {
				case i%5 == 0:
					q.AddWithOpts(AddOpts{Priority: LowPriority}, k)
				case rl != nil && i%3 == 0:
					rl.AddRateLimited(k)
				default:
					q.Add(k)
				}
			}
		}()
	}
	pwg.Wait()
	q.ShutDownWithDrain()
	wwg.Wait()
	if n := errs.Load(); n != 0 {
		t.Fatalf("%d times an item was held by two workers", n)
	}
	for k := range keys {
		if v, s := version[k].Load(), seen[k].Load(); v != s {
			t.Errorf("key %d: last add %d never processed (last seen %d)", k, v, s)
		}
	}
	if q.Len() != 0 || len(q.states) != 0 {
		t.Fatalf("after drain: Len %d, states %d", q.Len(), len(q.states))
	}
}
