package leaderelection_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/tcpproxy"
	"github.com/setpoint-dev/setpoint/rest"
)

// observer polls the Lease and every candidate while a test runs. It checks
// that at no sample two candidates report IsLeader, and that the Lease's own
// history is consistent: leaseTransitions never decreases, and while one
// identity holds the lease neither it nor acquireTime changes (each
// identity acquires at most once in these tests).
type observer struct {
	stop chan struct{}
	done chan struct{}

	mu       sync.Mutex
	problems []string
	holders  []string // distinct consecutive holders seen, "" included
	samples  int
}

func startObserver(t *testing.T, c *rest.Client, lease string, cands func() []*candidate) *observer {
	o := &observer{stop: make(chan struct{}), done: make(chan struct{})}
	r := rest.For[*coordinationv1.Lease, *coordinationv1.LeaseList](c, coordinationv1.SchemeGroupVersion.WithResource("leases"), true).Namespace(testNS)
	go func() {
		defer close(o.done)
		var last *coordinationv1.LeaseSpec
		for {
			select {
			case <-o.stop:
				return
			case <-time.After(15 * time.Millisecond):
			}
			var leaders []string
			for _, c := range cands() {
				if c.le.IsLeader() {
					leaders = append(leaders, c.id)
				}
			}
			if len(leaders) > 1 {
				o.problem(fmt.Sprintf("candidates %v all report IsLeader", leaders))
			}
			l, err := r.Get(context.Background(), lease, metav1.GetOptions{})
			if err != nil {
				continue // not created yet, or a transient error
			}
			o.checkSpec(last, &l.Spec)
			last = &l.Spec
		}
	}()
	t.Cleanup(o.finish)
	return o
}

func (o *observer) problem(p string) {
	o.mu.Lock()
	o.problems = append(o.problems, p)
	o.mu.Unlock()
}

func (o *observer) checkSpec(prev, cur *coordinationv1.LeaseSpec) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.samples++
	h := *cur.HolderIdentity
	if n := len(o.holders); n == 0 || o.holders[n-1] != h {
		o.holders = append(o.holders, h)
	}
	if prev == nil {
		return
	}
	pt, ct := *prev.LeaseTransitions, *cur.LeaseTransitions
	ph := *prev.HolderIdentity
	switch {
	case ct < pt:
		o.problems = append(o.problems, fmt.Sprintf("leaseTransitions went from %d to %d", pt, ct))
	case h == ph && h != "" && ct != pt: // "" twice may hide an acquire and release
		o.problems = append(o.problems, fmt.Sprintf("leaseTransitions changed %d->%d with holder %q unchanged", pt, ct, h))
	case h == ph && h != "" && !prev.AcquireTime.Equal(cur.AcquireTime):
		o.problems = append(o.problems, fmt.Sprintf("acquireTime changed while %q held the lease", h))
	}
}

func (o *observer) finish() {
	select {
	case <-o.stop:
	default:
		close(o.stop)
	}
	<-o.done
}

// seen reports whether the lease was observed with holder h.
func (o *observer) seen(h string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, x := range o.holders {
		if x == h {
			return true
		}
	}
	return false
}

// check stops the observer and reports what it found.
func (o *observer) check(t *testing.T) []string {
	t.Helper()
	o.finish()
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, p := range o.problems {
		t.Error(p)
	}
	if o.samples == 0 {
		t.Error("observer never read the lease")
	}
	return o.holders
}

// TestFailoverWhenLeaderCutOff: the leader reaches the server through a
// proxy; cutting the proxy makes its renewals fail. It must stop leading by
// its renew deadline, and the other candidate must take over only after
// the lease expired by its own clock — never while the old one still
// believes it leads. Real clock: 1.5s lease (2s on the wire), 1s renew
// deadline, 200ms retry.
func TestFailoverWhenLeaderCutOff(t *testing.T) {
	cfg := startServer(t)
	direct := newClient(t, cfg, "")
	px := tcpproxy.New(t, cfg.Host)
	proxied := newClient(t, cfg, px.URL())
	tr := newTracker()

	a := startCandidate(t, "a", candOpts{client: proxied, lease: "failover", tr: tr})
	eventually(t, "a to lead", a.le.IsLeader)
	b := startCandidate(t, "b", candOpts{client: direct, lease: "failover", tr: tr})
	eventually(t, "b to see a", func() bool { return b.sawLeader("a") })
	obs := startObserver(t, direct, "failover", func() []*candidate { return []*candidate{a, b} })

	// a keeps renewing while connected.
	first := getLease(t, direct, "failover").Spec.RenewTime.Time
	eventually(t, "a to renew", func() bool {
		return getLease(t, direct, "failover").Spec.RenewTime.After(first)
	})
	if b.le.IsLeader() {
		t.Fatal("b leads while a renews")
	}

	// If a still leads at cutAt, its last successful write was sent after
	// cutAt-RenewDeadline, so b (which waits 2s after seeing that write)
	// cannot start before cutAt+1s. Load only makes b later: a lower bound.
	cutAt := time.Now()
	leadingAtCut := a.le.IsLeader()
	px.Cut()
	<-a.done // a must give up on its own: nothing cancels it
	eventually(t, "b to lead", b.le.IsLeader)
	if err := a.le.Check(0); err != nil {
		t.Errorf("ex-leader unhealthy: %v", err)
	}
	if err := b.le.Check(0); err != nil {
		t.Errorf("new leader unhealthy: %v", err)
	}

	eventually(t, "the observer to see b hold the lease", func() bool { return obs.seen("b") })
	holders := obs.check(t)
	tr.check(t)
	tr.mu.Lock()
	stops, ivs := tr.stopped["a"], append([]interval(nil), tr.intervals...)
	tr.mu.Unlock()
	if stops != 1 {
		t.Errorf("a's OnStoppedLeading called %d times, want 1", stops)
	}
	if len(ivs) != 2 || ivs[0].who != "a" || ivs[1].who != "b" || ivs[0].end.IsZero() {
		t.Fatalf("leadership intervals = %+v, want a (ended) then b", ivs)
	}
	if gap := ivs[1].start.Sub(ivs[0].end); gap <= 0 {
		t.Errorf("b started %v after a stopped; want a positive gap", gap)
	}
	if early := ivs[1].start.Sub(cutAt); leadingAtCut && early < time.Second {
		t.Errorf("b started %v after the cut; the lease (2s) minus the renew deadline (1s) allows no less than 1s", early)
	}
	if len(holders) != 2 || holders[0] != "a" || holders[1] != "b" {
		t.Errorf("observed holders %v, want [a b]", holders)
	}
	l := getLease(t, direct, "failover")
	if *l.Spec.HolderIdentity != "b" || *l.Spec.LeaseTransitions != 1 {
		t.Errorf("lease: holder %q transitions %d, want b 1", *l.Spec.HolderIdentity, *l.Spec.LeaseTransitions)
	}
}

// TestRepeatedHandovers: three candidates compete on a real clock; the
// leader is cancelled (ReleaseOnCancel) and replaced by a fresh candidate
// under a new identity, several times. The observer and the callbacks
// must never see two leaders, and every handover must reach a new leader.
func TestRepeatedHandovers(t *testing.T) {
	cfg := startServer(t)
	cl := newClient(t, cfg, "")
	tr := newTracker()
	var mu sync.Mutex
	cands := map[string]*candidate{}
	start := func(id string) {
		c := startCandidate(t, id, candOpts{client: cl, lease: "rounds", release: true, tr: tr})
		mu.Lock()
		cands[id] = c
		mu.Unlock()
	}
	all := func() []*candidate {
		mu.Lock()
		defer mu.Unlock()
		out := make([]*candidate, 0, len(cands))
		for _, c := range cands {
			out = append(out, c)
		}
		return out
	}
	leader := func() *candidate {
		for _, c := range all() {
			if c.le.IsLeader() {
				return c
			}
		}
		return nil
	}
	for _, id := range []string{"a0", "b0", "c0"} {
		start(id)
	}
	obs := startObserver(t, cl, "rounds", all)

	const rounds = 6
	for i := 0; i < rounds; i++ {
		var cur *candidate
		eventually(t, "a leader", func() bool { cur = leader(); return cur != nil })
		cur.cancel()
		<-cur.done
		start(fmt.Sprintf("%s%d", cur.id[:1], i+1)) // rejoin as a fresh candidate
	}
	eventually(t, "a final leader", func() bool { return leader() != nil })
	obs.check(t)
	tr.check(t)
	tr.mu.Lock()
	n := len(tr.intervals)
	tr.mu.Unlock()
	if n != rounds+1 {
		t.Errorf("%d leadership intervals, want %d", n, rounds+1)
	}
	if got := *getLease(t, cl, "rounds").Spec.LeaseTransitions; got != rounds {
		t.Errorf("leaseTransitions = %d, want %d (a new holder each round)", got, rounds)
	}
}
