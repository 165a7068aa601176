package leaderelection_test

import (
	"context"
	"strings"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/setpoint-dev/setpoint/leaderelection"
	"github.com/setpoint-dev/setpoint/rest"
)

func TestValidate(t *testing.T) {
	cl, err := rest.New(&rest.Config{Host: "https://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	good := func() leaderelection.Config {
		return leaderelection.Config{
			Lock: &leaderelection.LeaseLock{Namespace: "ns", Name: "l", Identity: "me", Client: cl},
			Callbacks: leaderelection.Callbacks{
				OnStartedLeading: func(context.Context) {}, OnStoppedLeading: func() {},
			},
		}
	}
	cases := []struct {
		name string
		mod  func(*leaderelection.Config)
		want string // "" = valid
	}{
		{"defaults", func(*leaderelection.Config) {}, ""},
		{"short durations", func(c *leaderelection.Config) {
			c.LeaseDuration, c.RenewDeadline, c.RetryPeriod = 1500*time.Millisecond, time.Second, 200*time.Millisecond
		}, ""},
		{"renew equals lease", func(c *leaderelection.Config) { c.LeaseDuration, c.RenewDeadline = 10*time.Second, 10*time.Second }, "leaseDuration 10s must be greater than renewDeadline 10s"},
		{"renew above lease", func(c *leaderelection.Config) { c.LeaseDuration, c.RenewDeadline = 5*time.Second, 10*time.Second }, "must be greater than renewDeadline"},
		{"renew within jitter", func(c *leaderelection.Config) { c.RenewDeadline, c.RetryPeriod = 2400*time.Millisecond, 2*time.Second }, "renewDeadline 2.4s must be greater than retryPeriod*1.2"},
		{"negative", func(c *leaderelection.Config) { c.RetryPeriod = -time.Second }, "must not be negative"},
		{"no lock", func(c *leaderelection.Config) { c.Lock = nil }, "lock is required"},
		{"no identity", func(c *leaderelection.Config) { c.Lock.Identity = "" }, "identity is required"},
		{"no name", func(c *leaderelection.Config) { c.Lock.Name = "" }, "namespace and name are required"},
		{"no client", func(c *leaderelection.Config) { c.Lock.Client = nil }, "client is required"},
		{"no start callback", func(c *leaderelection.Config) { c.Callbacks.OnStartedLeading = nil }, "OnStartedLeading"},
		{"no stop callback", func(c *leaderelection.Config) { c.Callbacks.OnStoppedLeading = nil }, "OnStoppedLeading"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := good()
			tc.mod(&c)
			err := c.Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate = %v, want error containing %q", err, tc.want)
			}
			if _, nerr := leaderelection.New(c); nerr == nil {
				t.Fatal("New accepted an invalid config")
			}
		})
	}
}

// TestOneLeaderThenReleaseHandsOver: two candidates on one fake clock that
// is not stepped get one attempt each; exactly one leads and the other sees
// it. Cancelling the leader (ReleaseOnCancel) frees the lease only after its
// work returned, and the follower takes over at its very next attempt — with
// the clock advanced by one retry wait, far less than the lease duration.
func TestOneLeaderThenReleaseHandsOver(t *testing.T) {
	cfg := startServer(t)
	cl := newClient(t, cfg, "")
	fc := clocktesting.NewFakeClock(time.Now())
	tr := newTracker()
	a := startCandidate(t, "a", candOpts{client: cl, lease: "handover", clock: fc, release: true, tr: tr})
	b := startCandidate(t, "b", candOpts{client: cl, lease: "handover", clock: fc, release: true, tr: tr})

	eventually(t, "a leader", func() bool { return a.le.IsLeader() || b.le.IsLeader() })
	win, lose := a, b
	if b.le.IsLeader() {
		win, lose = b, a
	}
	eventually(t, "follower to see the leader", func() bool { return lose.sawLeader(win.id) })
	if lose.le.IsLeader() {
		t.Fatal("both candidates lead")
	}
	if got := lose.le.GetLeader(); got != win.id {
		t.Fatalf("follower's GetLeader = %q, want %q", got, win.id)
	}
	l := getLease(t, cl, "handover")
	if *l.Spec.HolderIdentity != win.id || *l.Spec.LeaseTransitions != 0 || *l.Spec.LeaseDurationSeconds != 2 {
		t.Fatalf("lease spec = holder %q transitions %d duration %d, want %q 0 2 (1.5s rounded up)",
			*l.Spec.HolderIdentity, *l.Spec.LeaseTransitions, *l.Spec.LeaseDurationSeconds, win.id)
	}

	// The leader's work checks that the lease is still its own when it ends:
	// the release must come after the guarded work returned.
	heldAtWorkEnd := make(chan string, 1)
	win.mu.Lock()
	win.onWorkEnd = func() { heldAtWorkEnd <- *getLease(t, cl, "handover").Spec.HolderIdentity }
	win.mu.Unlock()
	win.cancel()
	<-win.done
	if h := <-heldAtWorkEnd; h != win.id {
		t.Fatalf("lease holder when the leader's work ended = %q, want %q", h, win.id)
	}
	l = getLease(t, cl, "handover")
	if *l.Spec.HolderIdentity != "" || *l.Spec.LeaseDurationSeconds != 1 {
		t.Fatalf("released lease: holder %q duration %d, want \"\" 1", *l.Spec.HolderIdentity, *l.Spec.LeaseDurationSeconds)
	}

	// Only the follower's retry timer is left on the clock; one maximal
	// retry wait fires it.
	eventually(t, "follower's retry timer", func() bool { return fc.Waiters() == 1 })
	fc.Step(maxRetryWait(200*time.Millisecond) + time.Millisecond)
	eventually(t, "follower to lead", lose.le.IsLeader)
	l = getLease(t, cl, "handover")
	if *l.Spec.HolderIdentity != lose.id || *l.Spec.LeaseTransitions != 1 {
		t.Fatalf("lease after handover: holder %q transitions %d, want %q 1", *l.Spec.HolderIdentity, *l.Spec.LeaseTransitions, lose.id)
	}
	if !lose.sawLeader("") {
		t.Fatal("follower was not told the lease was released")
	}
	tr.check(t)
	tr.mu.Lock()
	stops := tr.stopped[win.id]
	tr.mu.Unlock()
	if stops != 1 {
		t.Fatalf("OnStoppedLeading called %d times for the old leader, want 1", stops)
	}
}

// TestNoReleaseFollowerWaitsForExpiry: without ReleaseOnCancel the lease
// stays held, and the follower takes it over exactly when, by its own clock,
// the record has not changed for leaseDurationSeconds (2s) — not before.
func TestNoReleaseFollowerWaitsForExpiry(t *testing.T) {
	cfg := startServer(t)
	cl := newClient(t, cfg, "")
	fc := clocktesting.NewFakeClock(time.Now())
	tr := newTracker()
	a := startCandidate(t, "a", candOpts{client: cl, lease: "expiry", clock: fc, tr: tr})
	eventually(t, "a to lead", a.le.IsLeader)
	b := startCandidate(t, "b", candOpts{client: cl, lease: "expiry", clock: fc, tr: tr})
	eventually(t, "b to see a", func() bool { return b.sawLeader("a") })
	a.cancel()
	<-a.done
	if h := *getLease(t, cl, "expiry").Spec.HolderIdentity; h != "a" {
		t.Fatalf("holder after cancel without release = %q, want a", h)
	}

	// Each step fires exactly one attempt of b (its wait is at most 2.2 x
	// 200ms). b observed the record at the fake start time, so attempts at
	// 0.44s .. 1.76s must fail and the one at 2.2s must succeed.
	step := maxRetryWait(200 * time.Millisecond)
	for i := 1; i <= 5; i++ {
		eventually(t, "b's retry timer", func() bool { return fc.Waiters() == 1 })
		fc.Step(step)
		var leads bool
		eventually(t, "b's attempt", func() bool {
			w := fc.Waiters() // read before IsLeader: see the ordering note in Run
			leads = b.le.IsLeader()
			return leads || w == 1
		})
		if want := i == 5; leads != want {
			t.Fatalf("after %v of fake time b leads = %v, want %v", time.Duration(i)*step, leads, want)
		}
	}
	l := getLease(t, cl, "expiry")
	if *l.Spec.HolderIdentity != "b" || *l.Spec.LeaseTransitions != 1 {
		t.Fatalf("lease: holder %q transitions %d, want b 1", *l.Spec.HolderIdentity, *l.Spec.LeaseTransitions)
	}
	tr.check(t)
}

// maxRetryWait is the longest wait between acquire attempts.
func maxRetryWait(retry time.Duration) time.Duration {
	f := 1 + leaderelection.JitterFactor
	return time.Duration(float64(retry) * f)
}
