package sharding

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var leasesGVR = coordinationv1.SchemeGroupVersion.WithResource("leases")

func jitter(d time.Duration) time.Duration {
	return d + time.Duration(rand.Int64N(int64(d)/5+1))
}

// round is one pass of the loop: free the shards past their deadline, read
// the group's Leases, renew membership and held shards, release drained
// shards, then move toward the fair share ceil(S/alive).
func (s *Sharder) round(ctx context.Context) {
	s.expire()
	rctx, cancel := context.WithTimeout(ctx, s.opts.RenewDeadline)
	defer cancel()
	list, err := s.leases.List(rctx, metav1.ListOptions{LabelSelector: GroupLabel + "=" + s.opts.Name})
	if err != nil {
		s.opts.Logger.Warn("sharding: list leases", "group", s.opts.Name, "err", err)
		s.renewHeld(rctx) // keep what we hold if only the list failed
		return
	}
	now := s.opts.Clock.Now()
	byName := map[string]*coordinationv1.Lease{}
	for i := range list.Items {
		l := &list.Items[i]
		byName[l.Name] = l
		if o, ok := s.observed[l.Name]; !ok || o.rv != l.ResourceVersion {
			s.observed[l.Name] = observation{rv: l.ResourceVersion, at: now}
		}
	}
	s.renewMember(rctx, byName[s.opts.memberLeaseName()])
	alive := s.countAlive(list.Items, now)
	s.mu.Lock()
	s.alive = alive
	s.mu.Unlock()
	s.renewHeld(rctx)
	s.releaseDrained(rctx)
	fair := (s.opts.Shards + alive - 1) / alive
	if n := len(s.held(active)); n > fair {
		s.drainExtra(n - fair)
	} else if n < fair {
		s.acquire(rctx, byName, fair-n, now)
	}
}

// expire frees the shards whose renew deadline passed.
func (s *Sharder) expire() {
	now := s.opts.Clock.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.shards {
		sh := &s.shards[i]
		if sh.state != free && !now.Before(sh.validUntil) {
			s.opts.Logger.Warn("sharding: shard lost (renew deadline passed)", "group", s.opts.Name, "shard", i)
			s.becomeFree(i)
		}
	}
}

// expired reports whether l may be taken: free, ours, or unchanged for its
// duration since this replica first saw its current version.
func (s *Sharder) expired(l *coordinationv1.Lease, now time.Time) bool {
	h := holder(l)
	if h == "" || h == s.opts.Identity {
		return true
	}
	var d time.Duration
	if l.Spec.LeaseDurationSeconds != nil {
		d = time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second
	}
	o := s.observed[l.Name]
	return !now.Before(o.at.Add(d))
}

func holder(l *coordinationv1.Lease) string {
	if l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// countAlive counts the member Leases held and not expired, at least 1
// (this replica).
func (s *Sharder) countAlive(items []coordinationv1.Lease, now time.Time) int {
	n := 1
	for i := range items {
		l := &items[i]
		if l.Labels[RoleLabel] != roleMember || holder(l) == s.opts.Identity || holder(l) == "" {
			continue
		}
		if !s.expired(l, now) {
			n++
		}
	}
	return n
}

// newLease builds a Lease of the group held by this replica.
func (s *Sharder) newLease(name, role string, now time.Time) *coordinationv1.Lease {
	id, secs := s.opts.Identity, s.opts.leaseSeconds()
	mt := metav1.NewMicroTime(now)
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.opts.Namespace, Name: name,
			Labels: map[string]string{GroupLabel: s.opts.Name, RoleLabel: role}},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: &id, LeaseDurationSeconds: &secs, AcquireTime: &mt, RenewTime: &mt},
	}
}

// take writes this replica into l (or creates the Lease when l is nil),
// guarded by l's resourceVersion.
func (s *Sharder) take(ctx context.Context, name, role string, l *coordinationv1.Lease, now time.Time) (*coordinationv1.Lease, error) {
	want := s.newLease(name, role, now)
	if l == nil {
		out, err := s.leases.Create(ctx, want, metav1.CreateOptions{})
		if err != nil {
			return nil, fmt.Errorf("create lease %s/%s: %w", s.opts.Namespace, name, err)
		}
		return out, nil
	}
	next := l.DeepCopy()
	if holder(l) == s.opts.Identity && l.Spec.AcquireTime != nil {
		want.Spec.AcquireTime = l.Spec.AcquireTime
	}
	trans := int32(0)
	if l.Spec.LeaseTransitions != nil {
		trans = *l.Spec.LeaseTransitions
	}
	if holder(l) != s.opts.Identity {
		trans++
	}
	want.Spec.LeaseTransitions = &trans
	next.Spec = want.Spec
	next.Labels = want.Labels
	out, err := s.leases.Update(ctx, next, metav1.UpdateOptions{})
	if err != nil {
		return nil, fmt.Errorf("update lease %s/%s: %w", s.opts.Namespace, name, err)
	}
	return out, nil
}

// release writes l free (holder "", 1 s) under its resourceVersion.
func (s *Sharder) release(ctx context.Context, l *coordinationv1.Lease) {
	next := l.DeepCopy()
	empty, one := "", int32(1)
	next.Spec.HolderIdentity, next.Spec.LeaseDurationSeconds = &empty, &one
	if _, err := s.leases.Update(ctx, next, metav1.UpdateOptions{}); err != nil {
		s.opts.Logger.Info("sharding: release lease (it will expire instead)", "lease", l.Name, "err", err)
	}
}

// renewMember renews (or creates) this replica's membership Lease.
func (s *Sharder) renewMember(ctx context.Context, listed *coordinationv1.Lease) {
	cur := s.member
	if cur == nil || (listed != nil && listed.ResourceVersion != cur.ResourceVersion && holder(listed) != s.opts.Identity) {
		cur = listed
	}
	out, err := s.take(ctx, s.opts.memberLeaseName(), roleMember, cur, s.opts.Clock.Now())
	if err != nil {
		s.opts.Logger.Warn("sharding: renew membership", "err", err)
		s.member = nil
		return
	}
	s.member = out
}

// renewHeld renews every held shard in parallel; a shard whose Lease was
// changed by someone else is freed at once, one whose renewal failed
// otherwise stays held until its renew deadline. An active shard renewed
// only after its renew deadline had passed is regained: while it lapsed,
// the gate and the enqueue filter dropped its requests, and since it never
// changed hands no one else will reconcile them, so the OnAcquire hooks
// are told of it as of a new shard (Resync enqueues its objects again).
func (s *Sharder) renewHeld(ctx context.Context) {
	s.mu.Lock()
	type job struct {
		i int
		l *coordinationv1.Lease
	}
	var jobs []job
	for i := range s.shards {
		if s.shards[i].state != free {
			jobs = append(jobs, job{i, s.shards[i].lease})
		}
	}
	s.mu.Unlock()
	regained := make([]bool, s.opts.Shards)
	var wg sync.WaitGroup
	for _, j := range jobs {
		wg.Go(func() {
			sent := s.opts.Clock.Now()
			out, err := s.take(ctx, s.opts.shardLeaseName(j.i), roleShard, j.l, sent)
			s.mu.Lock()
			defer s.mu.Unlock()
			sh := &s.shards[j.i]
			if sh.state == free || sh.lease != j.l {
				return // lost or released meanwhile
			}
			switch {
			case err == nil:
				until := sent.Add(s.opts.RenewDeadline)
				// Written under mu, read after wg.Wait.
				regained[j.i] = s.regains(sh, until)
				sh.lease, sh.validUntil = out, until
			case apierrors.IsConflict(err) || apierrors.IsNotFound(err):
				s.opts.Logger.Warn("sharding: shard lost (lease changed)", "shard", j.i, "err", err)
				s.becomeFree(j.i)
			default:
				s.opts.Logger.Warn("sharding: renew shard", "shard", j.i, "err", err)
			}
		})
	}
	wg.Wait()
	if n := count(regained); n > 0 {
		s.opts.Logger.Info("sharding: shards regained after their renew deadline passed", "group", s.opts.Name,
			"identity", s.opts.Identity, "count", n)
		s.notifyAcquired(regained)
	}
}

// regains reports whether renewing active shard sh until its new renew
// deadline until makes it admit requests again after it stopped: its old
// deadline passed (so the gate and the filter may have dropped requests)
// and the new one has not. Caller holds mu.
func (s *Sharder) regains(sh *shard, until time.Time) bool {
	now := s.opts.Clock.Now()
	return sh.state == active && !now.Before(sh.validUntil) && now.Before(until)
}

// releaseDrained releases the draining shards with nothing in flight.
func (s *Sharder) releaseDrained(ctx context.Context) {
	s.mu.Lock()
	var out []*coordinationv1.Lease
	for i := range s.shards {
		sh := &s.shards[i]
		if sh.state == draining && sh.inflight == 0 {
			out = append(out, sh.lease)
			s.becomeFree(i)
		}
	}
	s.mu.Unlock()
	for _, l := range out {
		s.release(ctx, l)
		s.opts.Logger.Info("sharding: shard released", "lease", l.Name)
	}
}

// drainExtra moves n active shards, those this replica weighs least, to
// draining: the gate stops admitting them at once.
func (s *Sharder) drainExtra(n int) {
	held := s.held(active)
	slices.SortFunc(held, func(a, b int) int {
		wa, wb := weight(s.opts.Identity, a), weight(s.opts.Identity, b)
		if wa < wb {
			return -1
		}
		if wa > wb {
			return 1
		}
		return 0
	})
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, i := range held[:n] {
		s.shards[i].state = draining
	}
}

// acquire takes up to n free or expired shards, those this replica weighs
// most first, then tells the OnAcquire hooks.
func (s *Sharder) acquire(ctx context.Context, byName map[string]*coordinationv1.Lease, n int, now time.Time) {
	var cands []int
	for i := range s.opts.Shards {
		s.mu.Lock()
		st := s.shards[i].state
		s.mu.Unlock()
		if st != free {
			continue
		}
		if l := byName[s.opts.shardLeaseName(i)]; l == nil || s.expired(l, now) {
			cands = append(cands, i)
		}
	}
	slices.SortFunc(cands, func(a, b int) int {
		wa, wb := weight(s.opts.Identity, a), weight(s.opts.Identity, b)
		if wa > wb {
			return -1
		}
		if wa < wb {
			return 1
		}
		return 0
	})
	acquired := make([]bool, s.opts.Shards)
	got := 0
	for _, i := range cands {
		if got == n {
			break
		}
		sent := s.opts.Clock.Now()
		out, err := s.take(ctx, s.opts.shardLeaseName(i), roleShard, byName[s.opts.shardLeaseName(i)], sent)
		if err != nil {
			s.opts.Logger.Debug("sharding: acquire shard", "shard", i, "err", err)
			continue
		}
		s.mu.Lock()
		s.becomeActive(i, out, sent)
		s.mu.Unlock()
		acquired[i] = true
		got++
	}
	if got == 0 {
		return
	}
	s.opts.Logger.Info("sharding: shards acquired", "group", s.opts.Name, "identity", s.opts.Identity, "count", got)
	s.notifyAcquired(acquired)
}

// notifyAcquired calls the OnAcquire hooks, outside mu, with the shards
// that admit requests again.
func (s *Sharder) notifyAcquired(acquired []bool) {
	s.mu.Lock()
	hooks := slices.Clone(s.onAcquire)
	s.mu.Unlock()
	for _, f := range hooks {
		f(acquired)
	}
}

// count is the number of true entries of shards.
func count(shards []bool) int {
	n := 0
	for _, b := range shards {
		if b {
			n++
		}
	}
	return n
}
