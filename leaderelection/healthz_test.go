package leaderelection

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/setpoint-dev/setpoint/rest"
)

// TestHealthz drives the check's state directly (a wedged election loop
// cannot be produced on purpose through Run, which stops leading at its
// renew deadline): a leader is unhealthy exactly when it has not renewed for
// more than LeaseDuration+tolerance; a follower never is.
func TestHealthz(t *testing.T) {
	cl, err := rest.New(&rest.Config{Host: "https://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	fc := clocktesting.NewFakeClock(time.Now())
	le, err := New(Config{
		Lock:  &LeaseLock{Namespace: "ns", Name: "l", Identity: "me", Client: cl},
		Clock: fc,
		Callbacks: Callbacks{
			OnStartedLeading: func(context.Context) {}, OnStoppedLeading: func() {},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	h := NewHealthzAdaptor(5 * time.Second)
	if err := h.Check(nil); err != nil {
		t.Fatalf("adaptor without elector: %v", err)
	}
	h.SetLeaderElection(le)
	if h.Name() != "leaderElection" {
		t.Fatalf("Name = %q", h.Name())
	}

	le.mu.Lock()
	le.lastRenew = fc.Now()
	le.mu.Unlock()
	fc.Step(time.Hour)
	if err := h.Check(nil); err != nil {
		t.Fatalf("follower unhealthy: %v", err)
	}

	le.mu.Lock()
	le.leading, le.lastRenew = true, fc.Now()
	le.mu.Unlock()
	fc.Step(DefaultLeaseDuration + 5*time.Second)
	if err := h.Check(nil); err != nil {
		t.Fatalf("leader at exactly lease+tolerance: %v", err)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("healthy ServeHTTP code %d", rec.Code)
	}
	fc.Step(time.Millisecond)
	if err := h.Check(nil); err == nil {
		t.Fatal("leader past lease+tolerance reported healthy")
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	if rec.Code != http.StatusServiceUnavailable {
		t.Fatalf("unhealthy ServeHTTP code %d, want 503", rec.Code)
	}
}
