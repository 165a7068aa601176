package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/clock"

	"github.com/setpoint-dev/setpoint/reconcile"
	"github.com/setpoint-dev/setpoint/record"
	"github.com/setpoint-dev/setpoint/workqueue"
)

// DefaultCacheSyncTimeout bounds how long Start waits for its sources.
const DefaultCacheSyncTimeout = 2 * time.Minute

// MaxImmediateConflictRetries is how many failures a Request may have on
// record for a conflict to still be retried at once; past it conflicts
// back off like other errors, so that a conflict that keeps recurring does
// not spin a worker against the API server.
const MaxImmediateConflictRetries = 5

// Options configure a Controller. The zero value of every field selects
// the documented default.
type Options struct {
	// MaxConcurrentReconciles is the number of workers (default 1).
	MaxConcurrentReconciles int
	// RateLimiter decides retry backoff; default
	// workqueue.DefaultControllerRateLimiter on Clock.
	RateLimiter workqueue.RateLimiter[reconcile.Request]
	// CacheSyncTimeout bounds the wait for the sources' initial lists
	// (default DefaultCacheSyncTimeout).
	CacheSyncTimeout time.Duration
	// Clock drives the queue's delays, backoff, sync timeout and the
	// reconcile duration metric; default the real clock.
	Clock clock.WithTicker
	// Logger receives the controller's logs; default slog.Default().
	Logger *slog.Logger
	// Metrics, when set, records the controller_runtime_* metrics.
	Metrics *Metrics
	// QueueMetrics, when set, records the workqueue_* metrics of the
	// controller's queue (named after the controller).
	QueueMetrics workqueue.MetricsProvider
	// NotRetried are the error classes (see Classify) that are logged once
	// and not retried; nil means DefaultNotRetried (ClassInvalid,
	// ClassBadRequest). Add ClassForbidden or ClassNotFound to give up on
	// 403 or 404 too; an empty non-nil slice retries every error but
	// terminal ones. Terminal errors are never retried.
	NotRetried []ErrorClass
	// MaxRetries, when positive, bounds the retries of one request: the
	// failure that follows MaxRetries failed retries drops the request
	// (its history forgotten), logs it, counts it in
	// controller_runtime_reconcile_retries_exhausted_total and, with
	// Recorder and ObjectKind, records a Warning event
	// (ReasonMaxRetriesExceeded) on the object. The request is reconciled
	// again on the object's next event or resync. Zero: no bound.
	MaxRetries int
	// ObjectKind is the kind of the objects the requests name (the
	// builder sets its For kind); empty when requests name no object.
	ObjectKind schema.GroupVersionKind
	// Recorder records the events of dropped requests; nil records none.
	Recorder record.Recorder
}

// Controller runs a Reconciler over a rate-limited workqueue of Requests
// fed by its Sources.
type Controller struct {
	name     string
	do       reconcile.Reconciler
	workers  int
	limiter  workqueue.RateLimiter[reconcile.Request]
	qcfg     workqueue.Config
	clock    clock.WithTicker
	log      *slog.Logger
	metrics  ctrlMetrics
	syncWait time.Duration
	// notRetried, maxRetries, kind and recorder are the error policy
	// (Options.NotRetried, MaxRetries, ObjectKind, Recorder).
	notRetried []ErrorClass
	maxRetries int
	kind       schema.GroupVersionKind
	recorder   record.Recorder

	queueOnce sync.Once
	// queue is created on first use (Queue or Start), so that a controller
	// that never runs starts no goroutine.
	queue *workqueue.RateLimitingQueue[reconcile.Request]

	mu sync.Mutex
	// sources are started by Start, in order; guarded by mu.
	sources []Source
	// started is set once by Start; Watch is refused afterwards.
	started bool
}

// New returns a controller named name (unique within a process: it labels
// the logs, the metrics and the workqueue) that reconciles with r.
func New(name string, r reconcile.Reconciler, opts Options) (*Controller, error) {
	if name == "" {
		return nil, errors.New("controller: a name is required")
	}
	if r == nil {
		return nil, fmt.Errorf("controller %s: a reconciler is required", name)
	}
	if opts.MaxConcurrentReconciles <= 0 {
		opts.MaxConcurrentReconciles = 1
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.RateLimiter == nil {
		opts.RateLimiter = workqueue.DefaultControllerRateLimiter[reconcile.Request](opts.Clock)
	}
	if opts.CacheSyncTimeout <= 0 {
		opts.CacheSyncTimeout = DefaultCacheSyncTimeout
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.NotRetried == nil {
		opts.NotRetried = DefaultNotRetried
	}
	return &Controller{
		name: name, do: r, workers: opts.MaxConcurrentReconciles, limiter: opts.RateLimiter,
		qcfg:  workqueue.Config{Name: name, Clock: opts.Clock, MetricsProvider: opts.QueueMetrics},
		clock: opts.Clock, log: opts.Logger.With("controller", name),
		metrics: opts.Metrics.forController(name, opts.MaxConcurrentReconciles), syncWait: opts.CacheSyncTimeout,
		notRetried: slices.Clone(opts.NotRetried), maxRetries: opts.MaxRetries, kind: opts.ObjectKind,
		recorder: opts.Recorder,
	}, nil
}

// Name returns the controller's name.
func (c *Controller) Name() string { return c.name }

// Queue returns the controller's workqueue, for handlers and tests that
// enqueue requests directly. It is shut down when Start returns; a queue
// obtained from a controller that is never started must be shut down by
// the caller.
func (c *Controller) Queue() *workqueue.RateLimitingQueue[reconcile.Request] {
	c.queueOnce.Do(func() { c.queue = workqueue.NewRateLimiting(c.limiter, c.qcfg) })
	return c.queue
}

// NeedLeaderElection reports true: a controller runs only on the leader.
func (c *Controller) NeedLeaderElection() bool { return true }

// Watch adds a source of requests. It must be called before Start.
func (c *Controller) Watch(src Source) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.started {
		return fmt.Errorf("controller %s: Watch(%s) after Start", c.name, src)
	}
	c.sources = append(c.sources, src)
	return nil
}

// Start runs the controller until ctx ends: it starts the sources, waits
// for their initial lists (failing after CacheSyncTimeout with an error
// that names the resource and its last list/watch error), then runs the
// workers. When ctx ends it stops taking new work, waits for in-flight
// reconciles to return (their context is ctx, so they see the
// cancellation) and returns nil. Start may be called once; it returns an
// error if a source fails to start or to sync.
func (c *Controller) Start(ctx context.Context) error {
	c.mu.Lock()
	if c.started {
		c.mu.Unlock()
		return fmt.Errorf("controller %s: already started", c.name)
	}
	c.started = true
	sources := c.sources
	c.mu.Unlock()
	q := c.Queue()
	defer q.ShutDown()

	for _, src := range sources {
		if err := src.Start(ctx, c.name, q); err != nil {
			return fmt.Errorf("controller %s: start source %s: %w", c.name, src, err)
		}
	}
	if err := WaitForSync(ctx, c.clock, c.syncWait, sources...); err != nil {
		return fmt.Errorf("controller %s: %w", c.name, err)
	}
	c.log.Info("starting workers", "workers", c.workers)
	var wg sync.WaitGroup
	for range c.workers {
		wg.Go(func() {
			for c.processNext(ctx) {
			}
		})
	}
	<-ctx.Done()
	c.log.Info("stopping workers, waiting for in-flight reconciles")
	q.ShutDownWithDrain()
	wg.Wait()
	c.log.Info("all workers stopped")
	return nil
}
