package testenv

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/setpoint-dev/setpoint/cache"
	"github.com/setpoint-dev/setpoint/client"
	"github.com/setpoint-dev/setpoint/internal/testwait"
	"github.com/setpoint-dev/setpoint/manager"
)

// StartT starts an environment for the test t and stops it when the test
// ends (a failed start or stop fails the test). It turns the cache's
// mutation detector on for the process (cache.MutationDetectorEnv=true)
// unless that variable is set: informers built afterwards fingerprint what
// they cache, and RunManager fails the test when an object of the
// manager's cache was modified in place.
func StartT(t testing.TB, opts Options) *Environment {
	t.Helper()
	if _, set := os.LookupEnv(cache.MutationDetectorEnv); !set {
		if err := os.Setenv(cache.MutationDetectorEnv, "true"); err != nil {
			t.Fatalf("testenv: %v", err)
		}
	}
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
// manager is stopped, its cache checked for objects modified in place
// (Manager.CheckCacheMutations; a finding fails the test), before anything registered earlier with t.Cleanup
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
		if err := mgr.CheckCacheMutations(); err != nil {
			t.Errorf("manager: cached objects modified in place (deep-copy them first): %v", err)
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

// Eventually polls cond every 50 ms until it returns "" (the condition
// holds) and fails the test, with cond's last answer, if that takes longer
// than timeout. what names the condition in the failure.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() string) {
	t.Helper()
	testwait.UntilEvery(t, timeout, 50*time.Millisecond, what, testwait.Reason(cond))
}

// WaitForEvent waits up to 30 s for an Event in namespace about the
// object with uid, of type eventType ("Normal", "Warning") and reason,
// whose message contains msg, and returns it. c must read from the server
// (a client.New without a cache, or a manager's GetAPIReader): the events
// are listed with a field selector. The failure lists the events seen.
func WaitForEvent(t testing.TB, c client.Reader, namespace, uid, eventType, reason, msg string) *corev1.Event {
	t.Helper()
	var found *corev1.Event
	Eventually(t, 30*time.Second, "event "+reason, func() string {
		list := &corev1.EventList{}
		if err := c.List(context.Background(), list, client.InNamespace(namespace), client.MatchingFields{"involvedObject.uid": uid}); err != nil {
			return err.Error()
		}
		var seen []string
		for i, e := range list.Items {
			if e.Type == eventType && e.Reason == reason && strings.Contains(e.Message, msg) {
				found = &list.Items[i]
				return ""
			}
			seen = append(seen, e.Type+" "+e.Reason+": "+e.Message)
		}
		return fmt.Sprintf("events of %s: %q", uid, seen)
	})
	return found
}
