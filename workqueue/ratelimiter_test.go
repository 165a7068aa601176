package workqueue

import (
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

func TestExponentialBackoffSequence(t *testing.T) {
	ms := time.Millisecond
	want := []time.Duration{5 * ms, 10 * ms, 20 * ms, 40 * ms, 80 * ms, 160 * ms, 320 * ms, 640 * ms,
		1280 * ms, 2560 * ms, 5120 * ms, 10240 * ms, 20480 * ms, 40960 * ms, 81920 * ms, 163840 * ms,
		327680 * ms, 655360 * ms, 1000 * time.Second, 1000 * time.Second}
	r := NewExponentialRateLimiter[string](5*ms, 1000*time.Second)
	for i, w := range want {
		if got := r.When("a"); got != w {
			t.Fatalf("failure %d: When = %v, want %v", i, got, w)
		}
		if n := r.NumRequeues("a"); n != i+1 {
			t.Fatalf("NumRequeues = %d, want %d", n, i+1)
		}
	}
	for range 2000 { // far past the point where 2^n overflows
		r.When("a")
	}
	if got := r.When("a"); got != 1000*time.Second {
		t.Fatalf("after many failures When = %v, want cap", got)
	}
	if got := r.When("b"); got != 5*ms {
		t.Fatalf("other item: When = %v, want 5ms", got)
	}
	r.Forget("a")
	if n := r.NumRequeues("a"); n != 0 {
		t.Fatalf("NumRequeues after Forget = %d", n)
	}
	if got := r.When("a"); got != 5*ms {
		t.Fatalf("When after Forget = %v, want 5ms", got)
	}
}

func TestBucketRateLimiter(t *testing.T) {
	clk := clocktesting.NewFakeClock(epoch)
	r := NewBucketRateLimiter[int](10, 100, clk)
	for i := range 100 {
		if d := r.When(i); d != 0 {
			t.Fatalf("burst token %d: When = %v, want 0", i, d)
		}
	}
	steps := []struct {
		advance time.Duration
		want    time.Duration
	}{
		{0, 100 * time.Millisecond},
		{0, 200 * time.Millisecond},
		{0, 300 * time.Millisecond},
		// One second refills 10 tokens; 3 pay the debt, 7 remain.
		{time.Second, 0},
	}
	for i, s := range steps {
		clk.Step(s.advance)
		if d := r.When(0); d != s.want {
			t.Fatalf("step %d: When = %v, want %v", i, d, s.want)
		}
	}
	for range 6 {
		if d := r.When(0); d != 0 {
			t.Fatalf("refilled token: When = %v", d)
		}
	}
	if d := r.When(0); d != 100*time.Millisecond {
		t.Fatalf("after refill used: When = %v, want 100ms", d)
	}
	clk.Step(time.Hour) // refill never exceeds burst
	for range 100 {
		r.When(0)
	}
	if d := r.When(0); d != 100*time.Millisecond {
		t.Fatalf("burst cap: When = %v, want 100ms", d)
	}
	if r.NumRequeues(0) != 0 {
		t.Fatal("bucket NumRequeues must be 0")
	}
}

func TestMaxOfRateLimiter(t *testing.T) {
	fast := NewExponentialRateLimiter[string](time.Millisecond, time.Second)
	slow := NewExponentialRateLimiter[string](3*time.Millisecond, 10*time.Millisecond)
	r := NewMaxOfRateLimiter[string](fast, slow)
	want := []time.Duration{3, 6, 10, 10, 16, 32}
	for i, w := range want {
		if got := r.When("a"); got != w*time.Millisecond {
			t.Fatalf("failure %d: When = %v, want %vms", i, got, int64(w))
		}
	}
	if n := r.NumRequeues("a"); n != 6 {
		t.Fatalf("NumRequeues = %d, want 6", n)
	}
	r.Forget("a")
	if fast.NumRequeues("a") != 0 || slow.NumRequeues("a") != 0 {
		t.Fatal("Forget not passed to every limiter")
	}
}

func TestDefaultControllerRateLimiter(t *testing.T) {
	clk := clocktesting.NewFakeClock(epoch)
	r := DefaultControllerRateLimiter[int](clk)
	for i := range 100 { // within the burst, per-item backoff rules
		if d := r.When(i); d != 5*time.Millisecond {
			t.Fatalf("item %d: When = %v, want 5ms", i, d)
		}
	}
	if d := r.When(100); d != 100*time.Millisecond {
		t.Fatalf("over burst: When = %v, want 100ms from the bucket", d)
	}
	clk.Step(time.Hour)
	if d := r.When(0); d != 10*time.Millisecond {
		t.Fatalf("second failure of item 0: When = %v, want 10ms", d)
	}
}

func TestRateLimitingQueue(t *testing.T) {
	clk := clocktesting.NewFakeClock(epoch)
	q := NewRateLimiting[string](NewExponentialRateLimiter[string](time.Second, time.Minute), Config{Clock: clk})
	defer q.ShutDown()
	q.AddRateLimited("a")
	q.AddRateLimited("a") // second failure: waits 2s, but the 1s wait wins
	if n := q.NumRequeues("a"); n != 2 {
		t.Fatalf("NumRequeues = %d, want 2", n)
	}
	clk.Step(time.Second)
	mustGet(t, q, "a")
	q.Forget("a")
	q.Done("a")
	if n := q.NumRequeues("a"); n != 0 {
		t.Fatalf("NumRequeues after Forget = %d", n)
	}
	q.ShutDown()
	q.AddRateLimited("a")
	if n := q.NumRequeues("a"); n != 0 {
		t.Fatal("AddRateLimited after ShutDown must not count a failure")
	}
}
