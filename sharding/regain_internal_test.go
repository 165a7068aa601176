package sharding

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/reconcile"
	"github.com/setpoint-dev/setpoint/workqueue"
)

// recordingQueue is a handler.Queue that keeps what was added.
type recordingQueue struct {
	mu   sync.Mutex
	reqs []reconcile.Request
}

func (q *recordingQueue) Add(req reconcile.Request) { q.AddWithOpts(workqueue.AddOpts{}, req) }

func (q *recordingQueue) AddWithOpts(_ workqueue.AddOpts, reqs ...reconcile.Request) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.reqs = append(q.reqs, reqs...)
}

// take returns what was added since the last take.
func (q *recordingQueue) take() []reconcile.Request {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := q.reqs
	q.reqs = nil
	return out
}

// TestLateRenewalResyncsTheShard: a held shard whose renew deadline passes
// before a round's renewal lands (a slow API server, a loaded machine)
// drops requests at the gate meanwhile. The renewal succeeds, since no one
// else wrote the Lease, so the shard never changes hands and no peer's
// acquisition resyncs it: the late renewal itself must re-enqueue the
// shard's objects, or the dropped request is never reconciled.
// (TestShardedControllerManagerLeaderKilled saw a Deployment stay at 0
// replicas for 30 s this way.)
func TestLateRenewalResyncsTheShard(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	clk := clocktesting.NewFakeClock(time.Now())
	const renewDeadline = 2 * time.Second
	s, err := New(Options{Client: srv.RESTClient(t), Name: "late-renewal", Namespace: "default", Identity: "a",
		Shards: 1, LeaseDuration: 3 * time.Second, RenewDeadline: renewDeadline, RetryPeriod: 250 * time.Millisecond,
		Clock: clk, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "team", Name: "web"}}
	q := &recordingQueue{}
	s.Resync(q, func() []reconcile.Request { return []reconcile.Request{req} })
	reconciled := 0
	gate := s.Reconciler(reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
		reconciled++
		return reconcile.Result{}, nil
	}))
	ctx := t.Context()

	s.round(ctx)
	if got := q.take(); len(got) != 1 {
		t.Fatalf("acquisition enqueued %v, want [%v]", got, req)
	}

	clk.Step(renewDeadline)
	if s.Owns(req) {
		t.Fatal("the shard admits requests past its renew deadline")
	}
	if _, err := gate.Reconcile(ctx, req); err != nil || reconciled != 0 {
		t.Fatalf("the gate ran a request of a lapsed shard (err %v, %d reconciles)", err, reconciled)
	}

	// The renewal of a round that checked the deadline before it passed.
	s.renewHeld(ctx)
	if !s.Owns(req) {
		t.Fatal("the shard does not admit requests after its renewal")
	}
	if got := q.take(); len(got) != 1 || got[0] != req {
		t.Fatalf("the late renewal enqueued %v, want [%v] (the request the gate dropped)", got, req)
	}

	// An on-time renewal drops nothing, so it enqueues nothing.
	s.renewHeld(ctx)
	if got := q.take(); len(got) != 0 {
		t.Fatalf("an on-time renewal enqueued %v", got)
	}
}
