package controller_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/setpoint-dev/setpoint/controller"
	"github.com/setpoint-dev/setpoint/reconcile"
)

// exclusive records, per key, whether two reconciles ever overlapped, and
// holds the first `workers` calls until that many run at once, which proves
// the controller runs that many workers in parallel.
type exclusive struct {
	mu        sync.Mutex
	inFlight  map[reconcile.Request]bool
	overlaps  []reconcile.Request
	calls     map[reconcile.Request]int
	total     int
	barrier   sync.WaitGroup
	allInside chan struct{}
	gated     int
}

func (e *exclusive) Reconcile(_ context.Context, req reconcile.Request) (reconcile.Result, error) {
	e.mu.Lock()
	if e.inFlight[req] {
		e.overlaps = append(e.overlaps, req)
	}
	e.inFlight[req] = true
	e.calls[req]++
	e.total++
	gate := e.gated > 0
	if gate {
		e.gated--
	}
	e.mu.Unlock()
	if gate {
		e.barrier.Done()
		select {
		case <-e.allInside:
		case <-time.After(failSafe):
			return reconcile.Result{}, fmt.Errorf("workers never ran in parallel")
		}
	}
	e.mu.Lock()
	delete(e.inFlight, req)
	e.mu.Unlock()
	return reconcile.Result{}, nil
}

func TestWorkersNeverShareAKey(t *testing.T) {
	const workers, keys, rounds = 4, 16, 200
	e := &exclusive{inFlight: map[reconcile.Request]bool{}, calls: map[reconcile.Request]int{},
		allInside: make(chan struct{}), gated: workers}
	e.barrier.Add(workers)
	go func() { e.barrier.Wait(); close(e.allInside) }()
	c, err := controller.New("parallel", e, controller.Options{MaxConcurrentReconciles: workers,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Start(ctx) }()

	var producers sync.WaitGroup
	for p := range 4 {
		producers.Go(func() {
			for i := range rounds {
				c.Queue().Add(rq(fmt.Sprintf("k%d", (i+p)%keys)))
			}
		})
	}
	producers.Wait()
	waitFor(t, "every key reconciled", func() bool {
		e.mu.Lock()
		defer e.mu.Unlock()
		return len(e.calls) == keys && len(e.inFlight) == 0 && c.Queue().Len() == 0
	})
	select {
	case <-e.allInside:
	default:
		t.Fatalf("%d workers never reconciled at the same time", workers)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.overlaps) > 0 {
		t.Fatalf("keys reconciled concurrently: %v", e.overlaps)
	}
	t.Logf("%d reconciles of %d keys from %d adds", e.total, keys, 4*rounds)
}
