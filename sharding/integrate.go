package sharding

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/setpoint-dev/setpoint/controller"
	"github.com/setpoint-dev/setpoint/handler"
	"github.com/setpoint-dev/setpoint/informer"
	"github.com/setpoint-dev/setpoint/predicate"
	"github.com/setpoint-dev/setpoint/reconcile"
	"github.com/setpoint-dev/setpoint/workqueue"
)

// Reconciler wraps r so that it runs only on requests of shards this
// replica owns at reconcile time: other requests are dropped (their owner
// reconciles them), admitted ones are counted in flight until r returns and
// see a context that ends when the shard is lost or released, or at the
// shard's renew deadline. A shard is released only after its count is zero.
func (s *Sharder) Reconciler(r reconcile.Reconciler) reconcile.Reconciler {
	return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		rctx, exit, ok := s.enter(ctx, s.ShardFor(req))
		if !ok {
			return reconcile.Result{}, nil
		}
		defer exit()
		return r.Reconcile(rctx, req)
	})
}

// Source wraps src so that only requests of shards this replica owns enter
// the controller's queue. The source's handler still sees every event (so
// caches such as expectations stay exact); only the enqueue is filtered.
func (s *Sharder) Source(src controller.Source) controller.Source {
	return &source{Source: src, s: s}
}

type source struct {
	controller.Source
	s *Sharder
}

// Start implements controller.Source.
func (f *source) Start(ctx context.Context, name string, q handler.Queue) error {
	return f.Source.Start(ctx, name, &queue{q: q, s: f.s})
}

// queue drops requests of shards this replica does not own.
type queue struct {
	q handler.Queue
	s *Sharder
}

func (f *queue) Add(req reconcile.Request) {
	if f.s.Owns(req) {
		f.q.Add(req)
	}
}

func (f *queue) AddWithOpts(opts workqueue.AddOpts, reqs ...reconcile.Request) {
	kept := reqs[:0:0]
	for _, r := range reqs {
		if f.s.Owns(r) {
			kept = append(kept, r)
		}
	}
	if len(kept) > 0 {
		f.q.AddWithOpts(opts, kept...)
	}
}

// Predicate lets through the events of objects whose request
// (namespace/name) falls in a shard this replica owns. Use it when a
// handler maps an object to itself; for mapped requests wrap the Source.
func (s *Sharder) Predicate() predicate.Predicate {
	return predicate.NewFilter(func(o metav1.Object) bool {
		return s.Owns(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}})
	})
}

// Resync makes every acquisition enqueue, at low priority, the requests of
// list() that fall in the shards just acquired, so that objects whose
// events were filtered out while another replica owned them are reconciled
// here. list should read an informer's cache (it runs on the Sharder's
// loop). Call before Start.
func (s *Sharder) Resync(q handler.Queue, list func() []reconcile.Request) {
	s.OnAcquire(func(acquired []bool) {
		var reqs []reconcile.Request
		for _, r := range list() {
			if acquired[s.ShardFor(r)] {
				reqs = append(reqs, r)
			}
		}
		if len(reqs) > 0 {
			q.AddWithOpts(workqueue.AddOpts{Priority: workqueue.LowPriority}, reqs...)
		}
	})
}

// Runnable is what a manager runs.
type Runnable interface {
	Start(ctx context.Context) error
}

// EveryReplica wraps r (typically a sharded controller) so that a manager
// runs it whether or not it leads: sharding, not the leader Lease, decides
// what it may reconcile.
func EveryReplica(r Runnable) Runnable { return everyReplica{r} }

type everyReplica struct{ Runnable }

// NeedLeaderElection implements manager.LeaderElectionRunnable.
func (everyReplica) NeedLeaderElection() bool { return false }

// NewController builds a controller of r watching sources. With s nil it
// is a plain controller; otherwise its reconciler goes through
// s.Reconciler, each source through s.Source, and acquired shards re-enqueue
// their requests from list (see Resync). Sharded, the caller runs it on
// every replica (EveryReplica).
func NewController(s *Sharder, name string, r reconcile.Reconciler, opts controller.Options,
	list func() []reconcile.Request, sources ...controller.Source) (*controller.Controller, error) {
	if s != nil {
		r = s.Reconciler(r)
	}
	c, err := controller.New(name, r, opts)
	if err != nil {
		return nil, err
	}
	for _, src := range sources {
		if s != nil {
			src = s.Source(src)
		}
		if err := c.Watch(src); err != nil {
			return nil, err
		}
	}
	if s != nil {
		s.Resync(c.Queue(), list)
	}
	return c, nil
}

// CachedRequests returns a list function for NewController and Resync: a
// request per object in inf's cache.
func CachedRequests[T informer.Object](inf *informer.Informer[T]) func() []reconcile.Request {
	return func() []reconcile.Request {
		objs, err := inf.Lister().List(labels.Everything())
		if err != nil {
			return nil
		}
		out := make([]reconcile.Request, 0, len(objs))
		for _, o := range objs {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}})
		}
		return out
	}
}
