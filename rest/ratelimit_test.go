package rest_test

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/setpoint-dev/setpoint/rest"
)

func TestRateLimiterBucket(t *testing.T) {
	clk := clocktesting.NewFakeClock(epoch)
	rl := rest.NewRateLimiter(1, 2, clk)
	ctx := context.Background()
	for i := range 2 { // the burst is available at once
		if err := rl.Wait(ctx); err != nil {
			t.Fatalf("burst wait %d: %v", i, err)
		}
	}
	done := make(chan error, 1)
	go func() { done <- rl.Wait(ctx) }()
	for !clk.HasWaiters() {
		runtime.Gosched()
	}
	clk.Step(999 * time.Millisecond)
	if !clk.HasWaiters() {
		t.Fatal("third token granted before one second")
	}
	clk.Step(time.Millisecond)
	if err := <-done; err != nil {
		t.Fatalf("third wait: %v", err)
	}

	// A cancelled waiter hands its reserved token back.
	cctx, cancel := context.WithCancel(ctx)
	go func() { done <- rl.Wait(cctx) }()
	for !clk.HasWaiters() {
		runtime.Gosched()
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled wait: %v", err)
	}
	clk.Step(time.Second)
	if err := rl.Wait(ctx); err != nil {
		t.Fatalf("wait after refill: %v", err)
	}
	if clk.HasWaiters() {
		t.Error("a token refilled in one second should be granted at once")
	}
}

func TestRateLimiterDisabled(t *testing.T) {
	if rl := rest.NewRateLimiter(0, 10, nil); rl != nil {
		t.Fatalf("QPS 0 built a limiter: %+v", rl)
	}
	var rl *rest.RateLimiter
	if err := rl.Wait(context.Background()); err != nil {
		t.Fatalf("nil limiter: %v", err)
	}
}
