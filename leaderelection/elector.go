package leaderelection

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/clock"
)

// LeaderElector runs one candidate. Create it with New; call Run once.
type LeaderElector struct {
	cfg    Config // defaulted and validated; never changes
	client *leaseClient
	log    *slog.Logger
	notify *notifier // nil without OnNewLeader

	mu sync.Mutex
	// observed is the last lease record read or written, and lease the
	// object it came from (its resourceVersion is the next write's
	// precondition). nil until the first successful read.
	observed leaseRecord
	lease    *coordinationv1.Lease
	// observedTime is when, by our clock, observed last changed. A lease
	// held by another expires at observedTime + observed.LeaseDuration: we
	// never trust the holder's renewTime, which is on the holder's clock.
	observedTime time.Time
	// leading is true from just before OnStartedLeading starts until just
	// before its context is cancelled.
	leading bool
	// lastRenew is the time, by our clock, at which we SENT our last
	// successful acquire or renewal. The server applied that write after
	// it, so every other candidate saw it no earlier; leading past
	// lastRenew+RenewDeadline is therefore never allowed.
	lastRenew time.Time
	ran       bool // Run was called
}

// New validates cfg (after defaulting) and returns a candidate.
func New(cfg Config) (*LeaderElector, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	le := &LeaderElector{
		cfg:    cfg,
		client: newLeaseClient(cfg.Lock),
		log:    cfg.Logger.With("lease", cfg.Lock.Namespace+"/"+cfg.Lock.Name, "identity", cfg.Lock.Identity),
	}
	if cfg.Callbacks.OnNewLeader != nil {
		le.notify = newNotifier(cfg.Callbacks.OnNewLeader)
	}
	return le, nil
}

// IsLeader reports whether this candidate currently leads, i.e. whether
// OnStartedLeading's context is live (give or take the instant of change).
func (le *LeaderElector) IsLeader() bool {
	le.mu.Lock()
	defer le.mu.Unlock()
	return le.leading
}

// GetLeader returns the holder identity last seen in the lease ("" if the
// lease is free or was never read).
func (le *LeaderElector) GetLeader() string {
	le.mu.Lock()
	defer le.mu.Unlock()
	return le.observed.HolderIdentity
}

// Run competes for the lease until it is acquired, leads until leadership
// is lost or ctx ends, and returns. It returns only after OnStartedLeading
// has returned and every OnNewLeader call has finished. A LeaderElector runs
// once: a second call panics, as reusing a candidate's state is a bug.
func (le *LeaderElector) Run(ctx context.Context) {
	le.mu.Lock()
	if le.ran {
		le.mu.Unlock()
		panic("leaderelection: Run called twice on one LeaderElector")
	}
	le.ran = true
	le.mu.Unlock()
	if le.notify != nil {
		stop := le.notify.start()
		defer stop()
	}
	if !le.acquire(ctx) {
		return
	}
	leaderCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	le.setLeading(true)
	le.log.Info("started leading")
	work := make(chan struct{})
	go func() {
		defer close(work)
		le.cfg.Callbacks.OnStartedLeading(leaderCtx)
	}()
	lost := le.renew(ctx)
	le.setLeading(false)
	cancel()
	if lost {
		le.log.Warn("stopped leading: lease not renewed within the renew deadline", "renewDeadline", le.cfg.RenewDeadline)
		le.cfg.Callbacks.OnStoppedLeading()
		<-work
		return
	}
	le.log.Info("stopped leading: context cancelled")
	<-work
	if le.cfg.ReleaseOnCancel {
		le.release()
	}
	le.cfg.Callbacks.OnStoppedLeading()
}

func (le *LeaderElector) setLeading(v bool) {
	le.mu.Lock()
	le.leading = v
	le.mu.Unlock()
}

// acquire tries at once, then every RetryPeriod plus jitter, until the lease
// is ours (true) or ctx ends (false).
func (le *LeaderElector) acquire(ctx context.Context) bool {
	for {
		ok, err := le.attempt(ctx)
		if err != nil && ctx.Err() == nil {
			le.log.Warn("failed to acquire lease", "err", err)
		}
		if ok {
			return true
		}
		wait := le.cfg.RetryPeriod + time.Duration(rand.Float64()*JitterFactor*float64(le.cfg.RetryPeriod))
		t := le.cfg.Clock.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return false
		case <-t.C():
		}
	}
}

// attempt runs one tryAcquireOrRenew bounded (in real time, as a network
// timeout) by RenewDeadline.
func (le *LeaderElector) attempt(ctx context.Context) (bool, error) {
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	actx, cancel := context.WithTimeout(ctx, le.cfg.RenewDeadline)
	defer cancel()
	return le.tryAcquireOrRenew(actx)
}

// renew keeps the lease every RetryPeriod. It returns lost=true when no
// renewal succeeded by lastRenew+RenewDeadline (by the injected clock; an
// attempt in flight at that moment is cancelled and ignored), and
// lost=false when ctx ended first.
func (le *LeaderElector) renew(ctx context.Context) (lost bool) {
	deadline := le.newDeadlineTimer()
	defer func() { deadline.Stop() }()
	for {
		retry := le.cfg.Clock.NewTimer(le.cfg.RetryPeriod)
		select {
		case <-ctx.Done():
			retry.Stop()
			return false
		case <-deadline.C():
			retry.Stop()
			return true
		case <-retry.C():
		}
		actx, cancel := context.WithCancel(ctx)
		type result struct {
			ok  bool
			err error
		}
		done := make(chan result, 1)
		go func() {
			ok, err := le.tryAcquireOrRenew(actx)
			done <- result{ok, err}
		}()
		select {
		case r := <-done:
			cancel()
			if r.err != nil && ctx.Err() == nil {
				le.log.Warn("failed to renew lease", "err", r.err)
			}
			if r.ok {
				deadline.Stop()
				deadline = le.newDeadlineTimer()
			} else if holder := le.GetLeader(); holder != le.cfg.Lock.Identity {
				// Someone else took the lease over: we are past leading.
				le.log.Warn("lease taken over", "holder", holder)
				return true
			}
		case <-deadline.C():
			cancel()
			<-done
			return true
		case <-ctx.Done():
			cancel()
			<-done
			return false
		}
	}
}

// newDeadlineTimer fires at lastRenew+RenewDeadline (at once if past).
func (le *LeaderElector) newDeadlineTimer() clock.Timer {
	le.mu.Lock()
	last := le.lastRenew
	le.mu.Unlock()
	return le.cfg.Clock.NewTimer(le.cfg.RenewDeadline - le.cfg.Clock.Since(last))
}

// release writes the lease free (holder "", duration 1s) if we still hold
// it by our last write; the resourceVersion precondition makes this a no-op
// when anyone wrote since.
func (le *LeaderElector) release() {
	le.mu.Lock()
	lease, rec := le.lease, le.observed
	le.mu.Unlock()
	if lease == nil || rec.HolderIdentity != le.cfg.Lock.Identity {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), le.cfg.RenewDeadline)
	defer cancel()
	now := le.cfg.Clock.Now()
	free := leaseRecord{LeaseDuration: time.Second, AcquireTime: now, RenewTime: now, LeaderTransitions: rec.LeaderTransitions}
	out, err := le.client.update(ctx, lease, free)
	if err != nil {
		le.log.Warn("failed to release lease", "err", err)
		return
	}
	le.observe(out)
	le.log.Info("released lease")
}

// tryAcquireOrRenew makes one attempt to take or keep the lease. It returns
// true when our write succeeded. A lease validly held by someone else, a
// lost create race and a write conflict all return false with no error.
func (le *LeaderElector) tryAcquireOrRenew(ctx context.Context) (bool, error) {
	me := le.cfg.Lock.Identity
	le.mu.Lock()
	cached, leading := le.lease, le.leading
	le.mu.Unlock()
	// Fast path: while leading, renew against the lease we last wrote; a
	// conflict means someone else wrote, so fall back to a fresh read.
	if leading && cached != nil {
		ok, err := le.write(ctx, cached, specToRecord(&cached.Spec))
		if ok || !apierrors.IsConflict(err) {
			return ok, err
		}
	}
	lease, err := le.client.get(ctx)
	if apierrors.IsNotFound(err) {
		sent := le.cfg.Clock.Now()
		out, err := le.client.create(ctx, leaseRecord{
			HolderIdentity: me, LeaseDuration: le.cfg.LeaseDuration, AcquireTime: sent, RenewTime: sent,
		})
		if apierrors.IsAlreadyExists(err) {
			// Lost the creation race: learn who won.
			if lease, gerr := le.client.get(ctx); gerr == nil {
				le.observe(lease)
			}
			return false, nil
		}
		if err != nil {
			return false, err
		}
		le.wrote(out, sent)
		return true, nil
	}
	if err != nil {
		return false, err
	}
	rec := le.observe(lease)
	if rec.HolderIdentity != "" && rec.HolderIdentity != me && !le.expired() {
		return false, nil
	}
	ok, err := le.write(ctx, lease, rec)
	if apierrors.IsConflict(err) {
		return false, nil
	}
	return ok, err
}

// write replaces lease (read with record old) by a record naming us.
func (le *LeaderElector) write(ctx context.Context, lease *coordinationv1.Lease, old leaseRecord) (bool, error) {
	sent := le.cfg.Clock.Now()
	rec := leaseRecord{
		HolderIdentity: le.cfg.Lock.Identity, LeaseDuration: le.cfg.LeaseDuration,
		AcquireTime: old.AcquireTime, RenewTime: sent, LeaderTransitions: old.LeaderTransitions,
	}
	if old.HolderIdentity != le.cfg.Lock.Identity {
		rec.AcquireTime = sent
		rec.LeaderTransitions++
	}
	out, err := le.client.update(ctx, lease, rec)
	if err != nil {
		return false, err
	}
	le.wrote(out, sent)
	return true, nil
}

// wrote records a successful write of ours sent at sent.
func (le *LeaderElector) wrote(lease *coordinationv1.Lease, sent time.Time) {
	le.observe(lease)
	le.mu.Lock()
	le.lastRenew = sent
	le.mu.Unlock()
}

// observe records lease as the latest state; when its record differs from
// the previous one, observedTime restarts and a new holder is announced.
func (le *LeaderElector) observe(lease *coordinationv1.Lease) leaseRecord {
	rec := specToRecord(&lease.Spec)
	le.mu.Lock()
	changed := le.lease == nil || !rec.equal(le.observed)
	newHolder := le.lease == nil || rec.HolderIdentity != le.observed.HolderIdentity
	le.lease = lease
	if changed {
		le.observed = rec
		le.observedTime = le.cfg.Clock.Now()
	}
	le.mu.Unlock()
	if newHolder {
		le.log.Debug("new leader observed", "holder", rec.HolderIdentity)
		if le.notify != nil {
			le.notify.post(rec.HolderIdentity)
		}
	}
	return rec
}

// expired reports whether the observed record has not changed for its
// lease duration, by our clock.
func (le *LeaderElector) expired() bool {
	le.mu.Lock()
	defer le.mu.Unlock()
	return !le.cfg.Clock.Now().Before(le.observedTime.Add(le.observed.LeaseDuration))
}

func (r leaseRecord) equal(o leaseRecord) bool {
	return r.HolderIdentity == o.HolderIdentity && r.LeaseDuration == o.LeaseDuration &&
		r.AcquireTime.Equal(o.AcquireTime) && r.RenewTime.Equal(o.RenewTime) &&
		r.LeaderTransitions == o.LeaderTransitions
}

// String describes the candidate for logs.
func (le *LeaderElector) String() string {
	return fmt.Sprintf("candidate %q for lease %s/%s", le.cfg.Lock.Identity, le.cfg.Lock.Namespace, le.cfg.Lock.Name)
}
