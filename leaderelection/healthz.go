package leaderelection

import (
	"fmt"
	"net/http"
	"sync"
	"time"
)

// Check reports an error when this candidate believes it leads but has not
// renewed the lease for longer than LeaseDuration+tolerance: its election
// loop is wedged while others may already have taken over. A candidate
// that does not lead is always healthy.
func (le *LeaderElector) Check(tolerance time.Duration) error {
	le.mu.Lock()
	leading, last := le.leading, le.lastRenew
	le.mu.Unlock()
	if !leading {
		return nil
	}
	if since := le.cfg.Clock.Since(last); since > le.cfg.LeaseDuration+tolerance {
		return fmt.Errorf("leader %q has not renewed lease %s/%s for %v (lease %v, tolerance %v)",
			le.cfg.Lock.Identity, le.cfg.Lock.Namespace, le.cfg.Lock.Name, since, le.cfg.LeaseDuration, tolerance)
	}
	return nil
}

// HealthzAdaptor plugs an elector into a health endpoint. It exists before
// the elector does (health checks are registered early); until
// SetLeaderElection is called it reports healthy.
type HealthzAdaptor struct {
	tolerance time.Duration

	mu sync.Mutex
	le *LeaderElector // nil until SetLeaderElection
}

// NewHealthzAdaptor returns an adaptor tolerating tolerance beyond the
// lease duration.
func NewHealthzAdaptor(tolerance time.Duration) *HealthzAdaptor {
	return &HealthzAdaptor{tolerance: tolerance}
}

// SetLeaderElection attaches the elector to check.
func (h *HealthzAdaptor) SetLeaderElection(le *LeaderElector) {
	h.mu.Lock()
	h.le = le
	h.mu.Unlock()
}

// Name is the check's name, "leaderElection".
func (h *HealthzAdaptor) Name() string { return "leaderElection" }

// Check returns the elector's Check(tolerance), nil before one is attached.
// The request is unused; the signature matches health check registries.
func (h *HealthzAdaptor) Check(_ *http.Request) error {
	h.mu.Lock()
	le := h.le
	h.mu.Unlock()
	if le == nil {
		return nil
	}
	return le.Check(h.tolerance)
}

// ServeHTTP answers 200 "ok" when healthy and 503 with the reason when not.
func (h *HealthzAdaptor) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := h.Check(r); err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	_, _ = w.Write([]byte("ok"))
}
