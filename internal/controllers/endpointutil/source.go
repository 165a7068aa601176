package endpointutil

import (
	"context"
	"fmt"
	"sync"

	"github.com/setpoint-dev/setpoint/handler"
	"github.com/setpoint-dev/setpoint/informer"
)

// Source is a controller.Source that registers a handler of its own on a
// shared informer: the handler New builds for the controller's queue.
type Source[T informer.Object] struct {
	Inf      *informer.Informer[T]
	Resource string
	New      func(q handler.Queue) informer.Handler[T]

	mu  sync.Mutex
	reg *informer.Registration
}

// Start implements controller.Source.
func (s *Source[T]) Start(ctx context.Context, name string, q handler.Queue) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.reg != nil {
		return fmt.Errorf("%s source of %s started twice", s.Resource, name)
	}
	reg, err := s.Inf.AddEventHandler(s.New(q), informer.HandlerOptions{Name: name})
	if err != nil {
		return fmt.Errorf("register %s handler: %w", s.Resource, err)
	}
	s.reg = reg
	context.AfterFunc(ctx, func() { _ = s.Inf.RemoveEventHandler(reg) })
	return nil
}

// HasSynced implements controller.Source.
func (s *Source[T]) HasSynced() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reg != nil && s.reg.HasSynced()
}

// LastError implements controller.Source.
func (s *Source[T]) LastError() error { return s.Inf.LastError() }

// String implements controller.Source.
func (s *Source[T]) String() string { return s.Resource }
