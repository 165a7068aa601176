package informer

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/setpoint-dev/setpoint/cache"
	"github.com/setpoint-dev/setpoint/internal/ring"
)

// notification is one callback owed to one handler.
type notification[T any] struct {
	kind     cache.EventType
	old, new T
	// initial: OnAdd's isInInitialList. Initial notifications are counted
	// in listener.initialPending until their callback returns.
	initial bool
	// unknown: OnDelete's finalStateUnknown.
	unknown bool
}

// listener delivers the notifications of one registration to its handler
// from a goroutine of its own, through an unbounded buffer, so that the
// dispatcher never waits for a handler.
type listener[T any] struct {
	handler Handler[T]
	name    string
	// resync is the handler's resync period; 0 means none. Fixed.
	resync time.Duration
	// gauge counts notifications handed over whose callback has not
	// returned (queued plus the one running); nil without metrics.
	gauge prometheus.Gauge

	mu   sync.Mutex
	cond *sync.Cond
	// pending holds the notifications not yet handed to the handler,
	// oldest first. Guarded by mu.
	pending ring.Ring[notification[T]]
	// stopped is set by stop: no callback starts afterwards, pending is
	// empty and add drops. Guarded by mu.
	stopped bool
	// cancelResync stops the resync ticker goroutine; nil when none runs.
	// Guarded by the informer's mu.
	cancelResync context.CancelFunc

	// initialPending counts initial notifications handed over whose
	// callback has not returned (dropped ones stay counted).
	initialPending atomic.Int64
}

func newListener[T any](h Handler[T], name string, resync time.Duration, gauge prometheus.Gauge) *listener[T] {
	l := &listener[T]{handler: h, name: name, resync: resync, gauge: gauge}
	l.cond = sync.NewCond(&l.mu)
	return l
}

// add queues n for the handler. It never blocks on the handler; after stop
// it drops n.
func (l *listener[T]) add(n notification[T]) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped {
		return
	}
	if n.initial {
		l.initialPending.Add(1)
	}
	if l.gauge != nil {
		l.gauge.Inc()
	}
	l.pending.Push(n)
	l.cond.Signal()
}

// stop drops the pending notifications and makes run return once the
// callback in progress, if any, returns. Idempotent.
func (l *listener[T]) stop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped {
		return
	}
	l.stopped = true
	if l.gauge != nil {
		l.gauge.Sub(float64(l.pending.Len()))
	}
	l.pending.Reset()
	l.cond.Broadcast()
}

// run calls the handler for each notification until stop.
func (l *listener[T]) run() {
	for {
		n, ok := l.next()
		if !ok {
			return
		}
		l.deliver(n)
		if n.initial {
			l.initialPending.Add(-1)
		}
		if l.gauge != nil {
			l.gauge.Dec()
		}
	}
}

// next waits for the oldest pending notification; ok is false once
// stopped.
func (l *listener[T]) next() (n notification[T], ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for l.pending.Len() == 0 && !l.stopped {
		l.cond.Wait()
	}
	if l.stopped {
		return n, false
	}
	return l.pending.Pop()
}

func (l *listener[T]) deliver(n notification[T]) {
	switch n.kind {
	case cache.EventAdd:
		l.handler.OnAdd(n.new, n.initial)
	case cache.EventUpdate:
		l.handler.OnUpdate(n.old, n.new)
	case cache.EventDelete:
		l.handler.OnDelete(n.old, n.unknown)
	}
}
