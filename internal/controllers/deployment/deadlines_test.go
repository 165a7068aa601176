package deployment

import (
	"sync"
	"testing"
	"time"

	testclock "k8s.io/utils/clock/testing"

	"github.com/setpoint-dev/setpoint/reconcile"
)

// recorder is an adder that remembers what was queued.
type recorder struct {
	mu   sync.Mutex
	reqs []reconcile.Request
}

func (r *recorder) Add(req reconcile.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reqs = append(r.reqs, req)
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.reqs)
}

// A check is due at an absolute time: a sync that read the clock before it
// moved still gets its timer at the deadline, not that much later; a time
// already past fires at once; a new schedule replaces the old one.
func TestDeadlinesFireAtTheirTime(t *testing.T) {
	start := time.Now()
	clk := testclock.NewFakeClock(start)
	q := &recorder{}
	s := newDeadlines(clk, q)
	defer s.stopAll()
	req := request("ns", "d")

	clk.Step(20 * time.Second) // the clock moves while a sync that read start runs
	s.schedule(req, start.Add(30*time.Second))
	clk.Step(9 * time.Second)
	if q.count() != 0 || !s.pending(req) {
		t.Fatalf("fired before the deadline: %d queued, pending %v", q.count(), s.pending(req))
	}
	clk.Step(time.Second)
	if q.count() != 1 || s.pending(req) {
		t.Fatalf("at the deadline: %d queued, pending %v; want 1 and no longer pending", q.count(), s.pending(req))
	}

	s.schedule(req, start) // already past
	if q.count() != 2 {
		t.Fatalf("a past deadline queued %d times in all, want 2", q.count())
	}

	s.schedule(req, clk.Now().Add(time.Minute))
	s.schedule(req, clk.Now().Add(2*time.Minute))
	clk.Step(time.Minute)
	if q.count() != 2 || !s.pending(req) {
		t.Fatalf("a replaced schedule fired: %d queued", q.count())
	}
	clk.Step(time.Minute)
	if q.count() != 3 {
		t.Fatalf("the replacing schedule did not fire: %d queued", q.count())
	}
}
