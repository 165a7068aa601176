package controller_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/setpoint-dev/setpoint/controller"
	"github.com/setpoint-dev/setpoint/handler"
)

// syncedLater is a Source that reports synced once set.
type syncedLater struct{ synced atomic.Bool }

func (s *syncedLater) Start(context.Context, string, handler.Queue) error { return nil }
func (s *syncedLater) HasSynced() bool                                    { return s.synced.Load() }
func (s *syncedLater) LastError() error                                   { return nil }
func (s *syncedLater) String() string                                     { return "v1 things" }

// TestWaitForSyncWithFakeClock: a fake clock that nobody steps neither
// blocks the wait for a source that syncs nor lets it time out.
func TestWaitForSyncWithFakeClock(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Now())
	src := &syncedLater{}
	go func() {
		time.Sleep(30 * time.Millisecond)
		src.synced.Store(true)
	}()
	done := make(chan error, 1)
	go func() { done <- controller.WaitForSync(context.Background(), clk, time.Second, src) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("WaitForSync: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("WaitForSync still waiting for a synced source: it polls on the fake clock")
	}

	unsynced := &syncedLater{}
	go func() { done <- controller.WaitForSync(context.Background(), clk, time.Second, unsynced) }()
	for !clk.HasWaiters() {
		time.Sleep(time.Millisecond)
	}
	clk.Step(time.Second)
	if err := <-done; err == nil {
		t.Fatal("WaitForSync did not time out on the fake clock")
	}
}
