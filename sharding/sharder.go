package sharding

import (
	"context"
	"errors"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"

	"github.com/setpoint-dev/setpoint/reconcile"
	"github.com/setpoint-dev/setpoint/rest"
)

// state is this replica's relation to one shard.
type state int

const (
	// free: not held; the gate refuses the shard's requests.
	free state = iota
	// active: held and renewed; the gate admits requests.
	active
	// draining: held and renewed, the gate refuses new requests; the
	// lease is released once in-flight reconciles reach zero.
	draining
)

// shard is this replica's view of one shard. Guarded by Sharder.mu.
type shard struct {
	state state
	// lease is the Lease as last written by this replica (its
	// resourceVersion is the precondition of the next write); nil when free.
	lease *coordinationv1.Lease
	// validUntil is when the last successful write was SENT plus
	// RenewDeadline: the gate admits no request after it, and the loop
	// frees the shard once it passed. Zero when free.
	validUntil time.Time
	// inflight counts reconciles admitted by the gate and not yet ended.
	// A draining shard is released only at zero.
	inflight int
	// ctx is cancelled when the shard is lost or released; every admitted
	// reconcile's context ends with it. Nil when free.
	ctx    context.Context
	cancel context.CancelFunc
}

// observation is when this replica first saw a Lease's current
// resourceVersion, on its own clock.
type observation struct {
	rv string
	at time.Time
}

// Sharder owns this replica's shard Leases and membership Lease, and gates
// reconciles by shard. See the package documentation.
type Sharder struct {
	opts   Options
	leases *rest.Resource[*coordinationv1.Lease, *coordinationv1.LeaseList]

	mu sync.Mutex
	// shards has Options.Shards entries; guarded by mu.
	shards []shard
	// drained is broadcast when an inflight count drops; uses mu.
	drained *sync.Cond
	// onAcquire are called, outside mu, with the shards just acquired.
	// Fixed before Start.
	onAcquire []func(acquired []bool)
	// started is set by Start.
	started bool

	// Loop state, touched only by Start's goroutine.
	observed map[string]observation
	member   *coordinationv1.Lease
	alive    int
}

// New builds a Sharder. Nothing talks to the API server before Start.
func New(opts Options) (*Sharder, error) {
	if err := opts.setDefaults(); err != nil {
		return nil, err
	}
	s := &Sharder{
		opts:     opts,
		leases:   rest.For[*coordinationv1.Lease, *coordinationv1.LeaseList](opts.Client, leasesGVR, true).Namespace(opts.Namespace),
		shards:   make([]shard, opts.Shards),
		observed: map[string]observation{},
	}
	s.drained = sync.NewCond(&s.mu)
	return s, nil
}

// Identity is this replica's name in the Leases.
func (s *Sharder) Identity() string { return s.opts.Identity }

// Shards is the number of virtual shards.
func (s *Sharder) Shards() int { return s.opts.Shards }

// ShardFor returns the shard of req.
func (s *Sharder) ShardFor(req reconcile.Request) int { return ShardOf(s.opts.Key(req), s.opts.Shards) }

// Owns reports whether this replica holds req's shard and admits its
// reconciles now (active and not past its renew deadline). Event filters
// use it; the reconcile gate checks again.
func (s *Sharder) Owns(req reconcile.Request) bool {
	i := s.ShardFor(req)
	s.mu.Lock()
	defer s.mu.Unlock()
	sh := &s.shards[i]
	return sh.state == active && s.opts.Clock.Now().Before(sh.validUntil)
}

// Owned lists the shards this replica holds and admits, ascending.
func (s *Sharder) Owned() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []int
	for i := range s.shards {
		if s.shards[i].state == active {
			out = append(out, i)
		}
	}
	return out
}

// Alive is the number of live replicas this replica saw at its last round
// (itself included; 0 before the first round).
func (s *Sharder) Alive() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.alive
}

// OnAcquire registers f, called from the Sharder's loop each time shards
// start admitting requests, with acquired[i] true for each of them: shards
// it just acquired, after they became active, and shards it held whose
// renewal succeeded only after their renew deadline had passed (requests
// of theirs were dropped meanwhile, and no other replica took them over).
// It must not block for long. Call before Start.
func (s *Sharder) OnAcquire(f func(acquired []bool)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onAcquire = append(s.onAcquire, f)
}

// enter admits a reconcile of shard i if it is active and within its
// renew deadline: it counts the reconcile in flight and returns a context
// that ends with ctx, with the shard's loss or release, and at the shard's
// current renew deadline; exit must be called when the reconcile ended.
func (s *Sharder) enter(ctx context.Context, i int) (rctx context.Context, exit func(), ok bool) {
	s.mu.Lock()
	sh := &s.shards[i]
	now := s.opts.Clock.Now()
	if sh.state != active || !now.Before(sh.validUntil) {
		s.mu.Unlock()
		return nil, nil, false
	}
	sh.inflight++
	shardCtx, until := sh.ctx, sh.validUntil
	s.mu.Unlock()

	rctx, cancelDeadline := context.WithTimeout(ctx, until.Sub(now))
	stop := context.AfterFunc(shardCtx, cancelDeadline)
	exit = func() {
		stop()
		cancelDeadline()
		s.mu.Lock()
		s.shards[i].inflight--
		s.drained.Broadcast()
		s.mu.Unlock()
	}
	return rctx, exit, true
}

// becomeActive records a successful acquisition of shard i by a write
// sent at sent. Caller holds mu.
func (s *Sharder) becomeActive(i int, l *coordinationv1.Lease, sent time.Time) {
	sh := &s.shards[i]
	sh.state = active
	sh.lease = l
	sh.validUntil = sent.Add(s.opts.RenewDeadline)
	sh.ctx, sh.cancel = context.WithCancel(context.Background())
}

// becomeFree forgets shard i and cancels its in-flight reconciles. Caller
// holds mu.
func (s *Sharder) becomeFree(i int) {
	sh := &s.shards[i]
	if sh.cancel != nil {
		sh.cancel()
	}
	inflight := sh.inflight
	*sh = shard{inflight: inflight}
}

// held lists the shards in state st.
func (s *Sharder) held(st state) []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []int
	for i := range s.shards {
		if s.shards[i].state == st {
			out = append(out, i)
		}
	}
	return out
}

// Start runs the Sharder until ctx ends: a round at once and then every
// RetryPeriod (jittered). On the way out it stops admitting reconciles,
// waits (up to each shard's renew deadline) for in-flight ones, releases
// the shards that drained and its membership. Start may be called once.
func (s *Sharder) Start(ctx context.Context) error {
	s.mu.Lock()
	if s.started {
		s.mu.Unlock()
		return errors.New("sharding: already started")
	}
	s.started = true
	s.mu.Unlock()
	log := s.opts.Logger
	log.Info("sharding: starting", "group", s.opts.Name, "identity", s.opts.Identity, "shards", s.opts.Shards)
	for {
		s.round(ctx)
		t := s.opts.Clock.NewTimer(jitter(s.opts.RetryPeriod))
		select {
		case <-ctx.Done():
			t.Stop()
			s.shutdown()
			return nil
		case <-t.C():
		}
	}
}

// NeedLeaderElection reports false: every replica runs its Sharder.
func (s *Sharder) NeedLeaderElection() bool { return false }

// shutdown frees every shard after its in-flight reconciles ended and
// releases the Leases whose reconciles drained in time.
func (s *Sharder) shutdown() {
	s.mu.Lock()
	var release []*coordinationv1.Lease
	for i := range s.shards {
		sh := &s.shards[i]
		if sh.state == free {
			continue
		}
		if sh.cancel != nil {
			sh.cancel()
		}
		sh.state = draining
		for sh.inflight > 0 && s.opts.Clock.Now().Before(sh.validUntil) {
			s.waitDrain(sh.validUntil)
		}
		if sh.inflight == 0 {
			release = append(release, sh.lease)
		}
		s.becomeFree(i)
	}
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.RenewDeadline)
	defer cancel()
	var wg sync.WaitGroup
	for _, l := range append(release, s.member) {
		if l != nil {
			wg.Go(func() { s.release(ctx, l) })
		}
	}
	wg.Wait()
	s.opts.Logger.Info("sharding: stopped", "group", s.opts.Name, "identity", s.opts.Identity, "released", len(release))
}

// waitDrain waits on drained, but wakes by until at the latest. Caller
// holds mu.
func (s *Sharder) waitDrain(until time.Time) {
	t := time.AfterFunc(until.Sub(s.opts.Clock.Now()), func() {
		s.mu.Lock()
		s.drained.Broadcast()
		s.mu.Unlock()
	})
	s.drained.Wait()
	t.Stop()
}
