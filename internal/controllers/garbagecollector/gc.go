package garbagecollector

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/clock"
	"k8s.io/utils/lru"

	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/record"
	"github.com/setpoint-dev/setpoint/rest"
	"github.com/setpoint-dev/setpoint/workqueue"
)

// Kubernetes' defaults.
const (
	DefaultDeleteWorkers   = 20
	DefaultOrphanWorkers   = 5
	DefaultResyncPeriod    = 30 * time.Second
	DefaultSyncTimeout     = 30 * time.Second
	absentOwnerCacheSize   = 500
	orphanPatchParallelism = 16
)

// DefaultIgnoredResources are the resources the collector does not watch:
// events, as in Kubernetes.
func DefaultIgnoredResources() []schema.GroupResource {
	return []schema.GroupResource{{Group: "", Resource: "events"}, {Group: "events.k8s.io", Resource: "events"}}
}

// Options tune the collector. The zero value means Kubernetes' defaults.
type Options struct {
	// DeleteWorkers and OrphanWorkers are the numbers of attemptToDelete
	// and attemptToOrphan workers (default 20 and 5).
	DeleteWorkers, OrphanWorkers int
	// ResyncPeriod is how often discovery is read again to watch resources
	// added (or stop watching resources removed) since (default 30s).
	ResyncPeriod time.Duration
	// SyncTimeout bounds the wait for the initial lists before the workers
	// start (default 30s); the workers start anyway afterwards, which is
	// safe because every deletion is decided on live reads.
	SyncTimeout time.Duration
	// IgnoredResources are never watched; nil means
	// DefaultIgnoredResources().
	IgnoredResources []schema.GroupResource
}

func (o *Options) setDefaults() {
	if o.DeleteWorkers <= 0 {
		o.DeleteWorkers = DefaultDeleteWorkers
	}
	if o.OrphanWorkers <= 0 {
		o.OrphanWorkers = DefaultOrphanWorkers
	}
	if o.ResyncPeriod <= 0 {
		o.ResyncPeriod = DefaultResyncPeriod
	}
	if o.SyncTimeout <= 0 {
		o.SyncTimeout = DefaultSyncTimeout
	}
	if o.IgnoredResources == nil {
		o.IgnoredResources = DefaultIgnoredResources()
	}
}

// ServiceAccount is the controller's identity: kube-controller-manager's
// ServiceAccount for it in kube-system (see manager.ClientFor).
const ServiceAccount = "generic-garbage-collector"

// Add registers the garbage collector on mgr; it runs while mgr leads.
func Add(mgr *manager.Manager, opts Options) error {
	c, err := mgr.ClientFor(ServiceAccount)
	if err != nil {
		return fmt.Errorf("garbagecollector: %w", err)
	}
	rec, err := mgr.EventRecorderFor(ServiceAccount, "garbage-collector-controller")
	if err != nil {
		return fmt.Errorf("garbagecollector: event recorder: %w", err)
	}
	copts := mgr.ControllerOptions()
	gc := New(c, opts, Deps{Logger: mgr.Logger(), Recorder: rec, Clock: copts.Clock,
		QueueMetrics: copts.QueueMetrics})
	if err := mgr.Add(gc); err != nil {
		return fmt.Errorf("garbagecollector: %w", err)
	}
	return nil
}

// Deps are the collector's collaborators; zero fields get defaults.
type Deps struct {
	Logger       *slog.Logger
	Recorder     record.Recorder // nil: events are only logged
	Clock        clock.WithTicker
	QueueMetrics workqueue.MetricsProvider
}

// GarbageCollector watches every deletable resource, keeps the dependency
// graph of their ownerReferences, and deletes or orphans dependents. It is
// a manager.Runnable; Start may be called once.
type GarbageCollector struct {
	client   *rest.Client
	opts     Options
	log      *slog.Logger
	recorder record.Recorder
	clock    clock.WithTicker
	mapper   mapper
	g        *graph
	changes  *eventQueue
	toDelete *workqueue.RateLimitingQueue[*node]
	toOrphan *workqueue.RateLimitingQueue[*node]
	absent   *lru.Cache
	builder  *builder
	ignored  map[schema.GroupResource]bool

	mu sync.Mutex
	// monitors are the running informers by resource; guarded by mu.
	monitors map[schema.GroupResource]*monitor
	// kick asks Start's loop for a rediscovery before the next period
	// (a CRD changed); buffered, so a pending request absorbs the next.
	kick chan struct{}
}

// minKickInterval spaces out rediscoveries asked for by CRD changes.
const minKickInterval = 100 * time.Millisecond

// kickResync asks for a rediscovery soon.
func (gc *GarbageCollector) kickResync() {
	select {
	case gc.kick <- struct{}{}:
	default:
	}
}

// New builds a collector over c. Nothing runs until Start.
func New(c *rest.Client, opts Options, deps Deps) *GarbageCollector {
	opts.setDefaults()
	if deps.Logger == nil {
		deps.Logger = slog.Default()
	}
	if deps.Clock == nil {
		deps.Clock = clock.RealClock{}
	}
	queue := func(name string) *workqueue.RateLimitingQueue[*node] {
		return workqueue.NewRateLimiting(workqueue.DefaultControllerRateLimiter[*node](deps.Clock),
			workqueue.Config{Name: name, Clock: deps.Clock, MetricsProvider: deps.QueueMetrics})
	}
	gc := &GarbageCollector{
		client: c, opts: opts, log: deps.Logger.With("controller", "garbagecollector"), recorder: deps.Recorder,
		clock: deps.Clock, g: newGraph(), changes: newEventQueue(),
		toDelete: queue("garbage_collector_attempt_to_delete"), toOrphan: queue("garbage_collector_attempt_to_orphan"),
		absent: lru.New(absentOwnerCacheSize), ignored: map[schema.GroupResource]bool{},
		monitors: map[schema.GroupResource]*monitor{}, kick: make(chan struct{}, 1),
	}
	for _, gr := range opts.IgnoredResources {
		gc.ignored[gr] = true
	}
	gc.builder = &builder{g: gc.g, changes: gc.changes, toDelete: gc.toDelete, toOrphan: gc.toOrphan, absent: gc.absent}
	return gc
}

// Start runs the collector until ctx ends: discovery and informers, the
// graph builder, the workers, and rediscovery every ResyncPeriod. It
// returns nil once everything it started has stopped.
func (gc *GarbageCollector) Start(ctx context.Context) error {
	var wg sync.WaitGroup
	defer func() {
		gc.changes.close()
		gc.toDelete.ShutDown()
		gc.toOrphan.ShutDown()
		gc.stopMonitors()
		wg.Wait()
	}()
	gc.resync(ctx)
	gc.waitForSync(ctx)
	wg.Go(gc.builder.run)
	for range gc.opts.DeleteWorkers {
		wg.Go(func() { gc.deleteWorker(ctx) })
	}
	for range gc.opts.OrphanWorkers {
		wg.Go(func() { gc.orphanWorker(ctx) })
	}
	gc.log.Info("garbage collector started", "resources", gc.monitorCount())
	t := gc.clock.NewTicker(gc.opts.ResyncPeriod)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
			gc.resync(ctx)
		case <-gc.kick:
			gc.resync(ctx)
			// At most one kicked rediscovery per interval, in real time:
			// it limits work, whatever clock drives the collector.
			pause := time.NewTimer(minKickInterval)
			select {
			case <-ctx.Done():
			case <-pause.C:
			}
			pause.Stop()
		}
	}
}

// resync reads discovery, refreshes the mapper and starts or stops
// informers to match. Errors are logged: the next period tries again.
func (gc *GarbageCollector) resync(ctx context.Context) {
	resources, err := discover(ctx, gc.client)
	if err != nil {
		gc.log.Error("garbage collector discovery (partial results are used)", "err", err)
	}
	if len(resources) == 0 {
		return
	}
	gc.mapper.update(resources)
	gc.syncMonitors(ctx, resources, err == nil)
}

// waitForSync waits until every informer has handed its initial list to
// the graph builder, at most SyncTimeout.
func (gc *GarbageCollector) waitForSync(ctx context.Context) {
	deadline := gc.clock.Now().Add(gc.opts.SyncTimeout)
	for !gc.synced() {
		if gc.clock.Now().After(deadline) {
			gc.log.Warn("garbage collector: informers not synced; starting workers anyway", "after", gc.opts.SyncTimeout)
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-gc.clock.After(50 * time.Millisecond):
		}
	}
}
