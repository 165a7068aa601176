package deployment

import (
	"sync"
	"time"

	"k8s.io/utils/clock"

	"github.com/setpoint-dev/setpoint/reconcile"
)

// adder is the part of the controller's queue a deadline needs.
type adder interface {
	Add(reconcile.Request)
}

// deadlines schedules the progress re-check of rollouts that show no
// progress: when a Deployment's progress deadline would pass, its key is
// queued again so that ProgressDeadlineExceeded is reported on time even
// if nothing else happens. Timers run on the controller's injected clock,
// so a test's fake clock fires them with Step.
type deadlines struct {
	clock clock.WithDelayedExecution
	queue adder

	mu sync.Mutex
	// timers holds at most one pending timer per Deployment; guarded by
	// mu. A fired timer removes itself.
	timers map[reconcile.Request]clock.Timer
}

func newDeadlines(c clock.WithDelayedExecution, q adder) *deadlines {
	return &deadlines{clock: c, queue: q, timers: map[reconcile.Request]clock.Timer{}}
}

// schedule queues req at the time at, replacing any earlier schedule of
// req. The delay is taken from the clock when the timer is set, not when
// the sync that asks for it read the clock: a sync that ran while the
// clock moved (a fake clock stepped, or a slow sync) would otherwise set
// its timer that much too late. A time already past queues req at once.
func (s *deadlines) schedule(req reconcile.Request, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t, ok := s.timers[req]; ok {
		t.Stop()
		delete(s.timers, req)
	}
	d := at.Sub(s.clock.Now())
	if d <= 0 {
		s.queue.Add(req)
		return
	}
	var t clock.Timer
	t = s.clock.AfterFunc(d, func() {
		s.mu.Lock()
		if s.timers[req] == t {
			delete(s.timers, req)
		}
		s.mu.Unlock()
		s.queue.Add(req)
	})
	s.timers[req] = t
}

// cancel drops the pending schedule of req, if any.
func (s *deadlines) cancel(req reconcile.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t, ok := s.timers[req]; ok {
		t.Stop()
		delete(s.timers, req)
	}
}

// stopAll cancels every pending schedule (controller shutdown).
func (s *deadlines) stopAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for req, t := range s.timers {
		t.Stop()
		delete(s.timers, req)
	}
}

// pending reports whether req has a schedule (for tests).
func (s *deadlines) pending(req reconcile.Request) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.timers[req]
	return ok
}
