package daemonset

import (
	"sync"
	"time"

	"k8s.io/utils/clock"

	"github.com/setpoint-dev/setpoint/reconcile"
)

// adder is the part of the controller's queue a timer needs.
type adder interface {
	Add(reconcile.Request)
}

// timers queues DaemonSets again after a delay, on the controller's
// injected clock (so a test's fake clock fires them with Step): at the
// end of a failed pod's back-off, and when a ready pod becomes available
// (minReadySeconds). One timer per DaemonSet, keeping the earliest.
type timers struct {
	clock clock.WithDelayedExecution
	queue adder

	mu sync.Mutex
	// pending holds the timer and its due time per request; guarded by
	// mu. A fired timer removes itself.
	pending map[reconcile.Request]*timer
}

type timer struct {
	t   clock.Timer
	due time.Time
}

func newTimers(c clock.WithDelayedExecution, q adder) *timers {
	return &timers{clock: c, queue: q, pending: map[reconcile.Request]*timer{}}
}

// after queues req after d, unless an earlier timer for req is pending.
func (s *timers) after(req reconcile.Request, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	due := s.clock.Now().Add(d)
	if old, ok := s.pending[req]; ok {
		if !old.due.After(due) {
			return
		}
		old.t.Stop()
	}
	tm := &timer{due: due}
	tm.t = s.clock.AfterFunc(d, func() {
		s.mu.Lock()
		if s.pending[req] == tm {
			delete(s.pending, req)
		}
		s.mu.Unlock()
		s.queue.Add(req)
	})
	s.pending[req] = tm
}

// stopAll cancels every pending timer (controller shutdown).
func (s *timers) stopAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for req, tm := range s.pending {
		tm.t.Stop()
		delete(s.pending, req)
	}
}
