package controller

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/setpoint-dev/setpoint/handler"
	"github.com/setpoint-dev/setpoint/informer"
	"github.com/setpoint-dev/setpoint/predicate"
)

// kindSource feeds a queue from an informer through the handler build
// makes for the queue.
type kindSource[T informer.Object] struct {
	inf      *informer.Informer[T]
	resource string
	build    func(q handler.Queue) informer.Handler[T]
	// resync, when set, is the handler's own resync period
	// (WithResyncPeriod); nil: the informer's.
	resync *time.Duration

	mu sync.Mutex
	// reg is the handler's registration, set once by Start; guarded by mu.
	reg *informer.Registration
}

// Kind returns a Source that registers, on Start, a handler on inf mapping
// each event that passes preds to mapTo(obj). resource names the watched
// resource in errors ("apps/v1 deployments"). The handler is removed when
// the controller's context ends. The informer itself is started by its
// owner (the manager's factory); the source only waits for it.
func Kind[T informer.Object](inf *informer.Informer[T], resource string, mapTo handler.MapFunc[T], preds ...predicate.Predicate) Source {
	return Informer(inf, resource, func(q handler.Queue) informer.Handler[T] { return handler.New(q, mapTo, preds...) })
}

// Informer is Kind for a handler of the controller's own, which build makes
// for the controller's queue: one that must do more than map an object to
// requests (lower expectations before it enqueues, compare a node's old
// and new state against every owner).
func Informer[T informer.Object](inf *informer.Informer[T], resource string, build func(q handler.Queue) informer.Handler[T]) Source {
	return &kindSource[T]{inf: inf, resource: resource, build: build}
}

// Start implements Source.
func (s *kindSource[T]) Start(ctx context.Context, controller string, q handler.Queue) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.reg != nil {
		return fmt.Errorf("source %s started twice", s.resource)
	}
	reg, err := s.inf.AddEventHandler(s.build(q), informer.HandlerOptions{Name: controller, ResyncPeriod: s.resync})
	if err != nil {
		return fmt.Errorf("register handler on %s: %w", s.resource, err)
	}
	s.reg = reg
	context.AfterFunc(ctx, func() { _ = s.inf.RemoveEventHandler(reg) })
	return nil
}

// WithResyncPeriod returns src, made by Kind or Informer, with a resync
// period of its own: its handler is replayed the informer's whole cache
// every period (0: never) instead of the informer's default (the manager's
// SyncPeriod), as client-go's AddEventHandlerWithResyncPeriod. Other
// sources have no handler of their own to resync and are refused.
func WithResyncPeriod(src Source, period time.Duration) (Source, error) {
	r, ok := src.(interface{ withResync(time.Duration) Source })
	if !ok {
		return nil, fmt.Errorf("source %s: a resync period needs a source made by Kind or Informer", src)
	}
	if period < 0 {
		return nil, fmt.Errorf("source %s: negative resync period %v", src, period)
	}
	return r.withResync(period), nil
}

func (s *kindSource[T]) withResync(period time.Duration) Source {
	return &kindSource[T]{inf: s.inf, resource: s.resource, build: s.build, resync: &period}
}

// HasSynced implements Source.
func (s *kindSource[T]) HasSynced() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reg != nil && s.reg.HasSynced()
}

// LastError implements Source.
func (s *kindSource[T]) LastError() error { return s.inf.LastError() }

// String implements Source.
func (s *kindSource[T]) String() string { return s.resource }
