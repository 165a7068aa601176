package testenv

import (
	"bytes"
	"context"
	"sync"
	"testing"
	"time"

	"github.com/setpoint-dev/setpoint/manager"
)

// StartT starts an environment for the test t and stops it when the test
// ends (a failed start or stop fails the test).
func StartT(t testing.TB, opts Options) *Environment {
	t.Helper()
	env, err := Start(opts)
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("testenv: stop: %v", err)
		}
	})
	return env
}

// RunManager starts mgr for the test t and returns once it runs its
// controllers (it leads, or needs no election). When the test ends the
// manager is stopped before anything registered earlier with t.Cleanup
// (the environment, typically); a Start that fails fails the test, and so
// does a manager that is not running within 30 s. logs, when not nil, is
// printed if the test failed.
func RunManager(t testing.TB, mgr *manager.Manager, logs *LogBuffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
		mgr.Client().CloseIdleConnections()
		if logs != nil && t.Failed() {
			t.Logf("manager logs:\n%s", logs.String())
		}
	})
	select {
	case <-mgr.Elected():
	case err := <-done:
		t.Fatalf("manager stopped: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("manager not running after 30s")
	}
}

// LogBuffer collects a component's logs (give it to slog.NewTextHandler)
// for a test to read or print; it is safe for concurrent use.
type LogBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *LogBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything written so far.
func (b *LogBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
