package workqueue

import (
	"sync"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

// TestBoundExponentialBackoffThroughQueue drives the built-in exponential
// limiter through the queue's own failure counts: AddRateLimited waits 5ms,
// 10ms, 20ms, ... up to the 1000s cap on the fake clock, the queue and the
// limiter report the same counts, and Forget starts over at 5ms.
func TestBoundExponentialBackoffThroughQueue(t *testing.T) {
	clk := clocktesting.NewFakeClock(epoch)
	lim := NewExponentialRateLimiter[string](5*time.Millisecond, 1000*time.Second)
	q := NewRateLimiting[string](lim, Config{Clock: clk})
	defer q.ShutDown()
	if q.exp != lim {
		t.Fatal("a fresh exponential limiter must keep its counts in the queue")
	}
	want := 5 * time.Millisecond
	for i := range 24 {
		q.AddRateLimited("a")
		if n, ln := q.NumRequeues("a"), lim.NumRequeues("a"); n != i+1 || ln != i+1 {
			t.Fatalf("failure %d: NumRequeues queue %d, limiter %d; want %d", i, n, ln, i+1)
		}
		clk.Step(want - time.Nanosecond)
		q.moveReady()
		mustLen(t, q, 0) // not a nanosecond early
		clk.Step(time.Nanosecond)
		q.moveReady()
		mustGet(t, q, "a")
		q.Done("a") // a failure keeps the count past Done
		want = min(2*want, 1000*time.Second)
	}
	if want != 1000*time.Second {
		t.Fatalf("sequence never reached the cap: %v", want)
	}
	q.Forget("a")
	if n, ln := q.NumRequeues("a"), lim.NumRequeues("a"); n != 0 || ln != 0 {
		t.Fatalf("after Forget: NumRequeues queue %d, limiter %d", n, ln)
	}
	if len(q.states) != 0 {
		t.Fatalf("Forget of an idle item kept %d states", len(q.states))
	}
	if d := lim.When("a"); d != 5*time.Millisecond {
		t.Fatalf("When called directly after Forget = %v, want 5ms", d)
	}
	if n := q.NumRequeues("a"); n != 1 {
		t.Fatalf("a direct When must count in the queue: NumRequeues = %d", n)
	}
	lim.Forget("a")
	if n := q.NumRequeues("a"); n != 0 {
		t.Fatalf("a direct Forget must clear the queue's count: NumRequeues = %d", n)
	}
}

// TestBoundDefaultLimiterStillUsesBucket checks that binding the exponential
// half of DefaultControllerRateLimiter keeps the token bucket in force.
func TestBoundDefaultLimiterStillUsesBucket(t *testing.T) {
	clk := clocktesting.NewFakeClock(epoch)
	q := NewRateLimiting[int](DefaultControllerRateLimiter[int](clk), Config{Clock: clk})
	defer q.ShutDown()
	if q.exp == nil || len(q.others) != 1 {
		t.Fatalf("exp %v, others %d; want the exponential child bound and the bucket kept", q.exp, len(q.others))
	}
	for i := range 100 { // the burst: per-item backoff of 5ms rules
		q.AddRateLimited(i)
	}
	q.AddRateLimited(100) // over the burst: the bucket's 100ms rules
	clk.Step(5 * time.Millisecond)
	q.moveReady()
	mustLen(t, q, 100)
	clk.Step(95*time.Millisecond - time.Nanosecond)
	q.moveReady()
	mustLen(t, q, 100)
	clk.Step(time.Nanosecond)
	q.moveReady()
	mustLen(t, q, 101)
	if n := q.NumRequeues(100); n != 1 {
		t.Fatalf("NumRequeues = %d, want 1", n)
	}
}

// countingLimiter is a custom limiter that records how it is called.
type countingLimiter struct {
	mu      sync.Mutex
	wait    time.Duration
	whens   map[string]int
	forgets int
}

func (c *countingLimiter) When(item string) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.whens[item]++
	return c.wait
}

func (c *countingLimiter) Forget(item string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.forgets++
	delete(c.whens, item)
}

func (c *countingLimiter) NumRequeues(item string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.whens[item]
}

// TestCustomLimiterStillConsulted checks that a custom limiter is asked for
// every wait and count, alone and next to a bound exponential limiter.
func TestCustomLimiterStillConsulted(t *testing.T) {
	t.Run("alone", func(t *testing.T) {
		clk := clocktesting.NewFakeClock(epoch)
		c := &countingLimiter{wait: time.Second, whens: map[string]int{}}
		q := NewRateLimiting[string](c, Config{Clock: clk})
		defer q.ShutDown()
		q.AddRateLimited("a")
		q.AddRateLimited("a")
		if n := q.NumRequeues("a"); n != 2 {
			t.Fatalf("NumRequeues = %d, want the custom limiter's 2", n)
		}
		clk.Step(time.Second - time.Nanosecond)
		q.moveReady()
		mustLen(t, q, 0)
		clk.Step(time.Nanosecond)
		q.moveReady()
		mustGet(t, q, "a")
		q.Forget("a")
		q.Done("a")
		if c.forgets != 1 || q.NumRequeues("a") != 0 {
			t.Fatalf("forgets %d, NumRequeues %d", c.forgets, q.NumRequeues("a"))
		}
	})
	t.Run("beside a bound exponential", func(t *testing.T) {
		clk := clocktesting.NewFakeClock(epoch)
		c := &countingLimiter{wait: 50 * time.Millisecond, whens: map[string]int{}}
		exp := NewExponentialRateLimiter[string](10*time.Millisecond, time.Second)
		q := NewRateLimiting[string](NewMaxOfRateLimiter[string](c, exp), Config{Clock: clk})
		defer q.ShutDown()
		if q.exp != exp {
			t.Fatal("the exponential child was not bound")
		}
		// Waits: max(50, 10), max(50, 20), max(50, 40), max(50, 80).
		for i, want := range []time.Duration{50, 50, 50, 80} {
			q.AddRateLimited("a")
			clk.Step(want*time.Millisecond - time.Nanosecond)
			q.moveReady()
			mustLen(t, q, 0)
			clk.Step(time.Nanosecond)
			q.moveReady()
			mustGet(t, q, "a")
			q.Done("a")
			if c.NumRequeues("a") != i+1 || exp.NumRequeues("a") != i+1 {
				t.Fatalf("failure %d: custom %d, exponential %d", i, c.NumRequeues("a"), exp.NumRequeues("a"))
			}
		}
		q.Forget("a")
		if c.forgets != 1 || q.NumRequeues("a") != 0 {
			t.Fatalf("forgets %d, NumRequeues %d", c.forgets, q.NumRequeues("a"))
		}
	})
}

// TestUsedOrSharedLimiterNotBound checks that a limiter with failures on
// record, or one already bound to another queue, keeps one consistent count.
func TestUsedOrSharedLimiterNotBound(t *testing.T) {
	used := NewExponentialRateLimiter[string](0, 0)
	used.When("a")
	q1 := NewRateLimiting[string](used, Config{})
	defer q1.ShutDown()
	if q1.exp != nil {
		t.Fatal("a limiter with failures on record must not be bound")
	}
	q1.AddRateLimited("a")
	if n := q1.NumRequeues("a"); n != 2 {
		t.Fatalf("NumRequeues = %d, want 2", n)
	}

	shared := NewExponentialRateLimiter[string](0, 0)
	q2 := NewRateLimiting[string](shared, Config{})
	defer q2.ShutDown()
	q3 := NewRateLimiting[string](shared, Config{})
	defer q3.ShutDown()
	if q2.exp == nil || q3.exp != nil {
		t.Fatal("only the first queue may bind a limiter")
	}
	q3.AddRateLimited("b")
	q2.AddRateLimited("b")
	if n2, n3 := q2.NumRequeues("b"), q3.NumRequeues("b"); n2 != 2 || n3 != 2 {
		t.Fatalf("shared counts: %d and %d, want 2 and 2", n2, n3)
	}
	mustGet(t, q3, "b")
	mustGet(t, q2, "b")
}

// TestZeroDelayFailuresBuffered covers AddRateLimited and Forget when the
// bound limiter never delays: both only buffer an op, and every reader sees
// them applied in order.
func TestZeroDelayFailuresBuffered(t *testing.T) {
	q := NewRateLimiting[string](NewExponentialRateLimiter[string](0, 0), Config{})
	q.AddRateLimited("a")
	q.AddRateLimited("a")
	q.AddRateLimited("b")
	if n := q.NumRequeues("a"); n != 2 {
		t.Fatalf("NumRequeues = %d, want 2", n)
	}
	mustLen(t, q, 2)
	mustGet(t, q, "a")
	q.AddRateLimited("a") // held: dirty again, counted
	q.Forget("a")
	if n := q.NumRequeues("a"); n != 0 {
		t.Fatalf("NumRequeues after Forget = %d", n)
	}
	q.Done("a")
	mustGet(t, q, "b")
	q.Done("b") // not forgotten: the count outlives Done
	if n := q.NumRequeues("b"); n != 1 {
		t.Fatalf("NumRequeues after Done = %d, want 1", n)
	}
	mustGet(t, q, "a")
	q.Done("a")
	q.ShutDown()
	q.AddRateLimited("c")
	if n := q.NumRequeues("c"); n != 0 {
		t.Fatal("AddRateLimited after ShutDown must not count a failure")
	}
	q.Forget("b") // after ShutDown Forget still clears
	if n := q.NumRequeues("b"); n != 0 || len(q.states) != 0 {
		t.Fatalf("after Forget: NumRequeues %d, states %d", n, len(q.states))
	}
	if _, shutdown := q.Get(); !shutdown {
		t.Fatal("Get after drain must report shutdown")
	}
}
