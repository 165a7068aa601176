package rest_test

import (
	"context"
	"errors"
	"net/http"
	"runtime"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// TestClientDefaultRateLimit: a Config without QPS and Burst gets
// client-go's defaults, 5 requests per second with a burst of 10; a
// negative QPS turns the limit off.
func TestClientDefaultRateLimit(t *testing.T) {
	getMany := func(cfg rest.Config) []time.Duration {
		c, s := fakeClient(t, cfg, func(int) (int, string) { return http.StatusOK, "" })
		err := run(s.clock, func() error {
			for range 12 {
				if _, err := configMaps(c).Get(context.Background(), "a", metav1.GetOptions{}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return s.times()
	}
	want := make([]time.Duration, 12)
	want[10], want[11] = 200*time.Millisecond, 400*time.Millisecond
	if got := getMany(rest.Config{}); !equal(got, want) {
		t.Errorf("default limit: requests at %v, want %v", got, want)
	}
	if got := getMany(rest.Config{QPS: -1}); !equal(got, make([]time.Duration, 12)) {
		t.Errorf("QPS -1: requests at %v, want all at once", got)
	}
}
