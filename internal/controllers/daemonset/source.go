package daemonset

import (
	"context"
	"fmt"
	"sync"

	"github.com/setpoint-dev/setpoint/handler"
	"github.com/setpoint-dev/setpoint/informer"
)

// source registers a handler of its own on a shared informer: the pod
// handler must lower expectations before it enqueues, and the node handler
// compares a node's old and new state against every DaemonSet, which the
// map functions of controller.Kind cannot do.
type source[T informer.Object] struct {
	inf      *informer.Informer[T]
	resource string
	build    func(handler.Queue) informer.Handler[T]

	mu sync.Mutex
	// reg is set once by Start; guarded by mu.
	reg *informer.Registration
}

func newSource[T informer.Object](inf *informer.Informer[T], resource string, build func(handler.Queue) informer.Handler[T]) *source[T] {
	return &source[T]{inf: inf, resource: resource, build: build}
}

// Start implements controller.Source.
func (s *source[T]) Start(ctx context.Context, name string, q handler.Queue) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.reg != nil {
		return fmt.Errorf("%s source of %s started twice", s.resource, name)
	}
	reg, err := s.inf.AddEventHandler(s.build(q), informer.HandlerOptions{Name: name})
	if err != nil {
		return fmt.Errorf("register %s handler: %w", s.resource, err)
	}
	s.reg = reg
	context.AfterFunc(ctx, func() { _ = s.inf.RemoveEventHandler(reg) })
	return nil
}

// HasSynced implements controller.Source.
func (s *source[T]) HasSynced() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reg != nil && s.reg.HasSynced()
}

// LastError implements controller.Source.
func (s *source[T]) LastError() error { return s.inf.LastError() }

// String implements controller.Source.
func (s *source[T]) String() string { return s.resource }
