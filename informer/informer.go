package informer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/clock"

	"github.com/setpoint-dev/setpoint/cache"
	"github.com/setpoint-dev/setpoint/reflector"
)

// Object is what an informer caches: an API object with metadata, as a
// pointer to an API struct or *unstructured.Unstructured. New, For and
// Dynamic need both halves because the reflector decodes runtime.Objects
// and the cache keys by metadata.
type Object interface {
	metav1.Object
	runtime.Object
}

// Options configure an informer. The zero value of every field selects the
// documented default.
type Options[T metav1.Object] struct {
	// ResyncPeriod is the resync period of handlers that do not choose
	// one; 0 means no resync.
	ResyncPeriod time.Duration
	// Transform is applied to every object before it enters the queue and
	// the cache. Default StripManagedFields; NoTransform[T] keeps objects
	// as sent. It may modify its argument (objects are fresh from the
	// decoder) and must not keep it.
	Transform func(T) (T, error)
	// Compaction shrinks objects after Transform, before they are cached.
	// The default, CompactShare, interns strings, trims slices and lets
	// equal sub-objects of cached objects share one copy; see Compaction.
	Compaction Compaction
	// Indexers are extra indexes of the cache; NamespaceIndex is always
	// installed.
	Indexers cache.Indexers[T]
	// Reflector configures list and watch (page size, watch list, backoff,
	// selectors, its own clock). Its Name, when set, also names the
	// informer in logs and metrics; its Logger defaults to Logger.
	Reflector reflector.Options
	// Clock drives resync tickers only (the reflector has its own, in
	// Reflector.Clock). Default clock.RealClock{}.
	Clock clock.WithTicker
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Metrics, when set, exports the pending-notification gauge of every
	// handler.
	Metrics *Metrics
	// Resource names the resource in the lister's NotFound errors, e.g.
	// {Resource: "configmaps"}; it also names the informer when
	// Reflector.Name is empty. The factory sets it. (An addition to the
	// original contract: Lister needs it.)
	Resource schema.GroupResource
}

// ErrStopped is returned by AddEventHandler once Run has returned.
var ErrStopped = errors.New("informer: stopped")

// runner is the reflector as the informer uses it.
type runner interface {
	Run(ctx context.Context)
	LastSyncResourceVersion() string
	LastError() error
}

// Informer keeps a cache of one collection in step with the server and
// notifies handlers of every change. See the package documentation.
type Informer[T metav1.Object] struct {
	name    string
	indexer *cache.ThreadSafeIndexer[T]
	lister  *cache.Lister[T]
	// queue carries the reflector's batches to the dispatcher; its known
	// store is indexer, which only the dispatcher (process) writes.
	queue *cache.Queue[T]
	// sink is what the reflector feeds: the transform in front of queue.
	sink reflector.Sink[T]
	// source is the reflector; nil only for package-internal tests, which
	// feed sink themselves.
	source runner

	defaultResync time.Duration
	clock         clock.WithTicker
	log           *slog.Logger
	metrics       *Metrics

	// mu guards the fields below. The dispatcher holds it for each whole
	// batch (store update and hand-over to every listener), so a handler
	// registered concurrently sees the store exactly between two batches.
	mu sync.Mutex
	// listeners maps live registrations to their listeners; order holds
	// the same listeners in registration order (dispatch order).
	listeners map[*Registration]*listener[T]
	order     []*listener[T]
	// started is set by Run; stopped once Run's loops ended. After stopped
	// no listener is added and no goroutine joins wg.
	started, stopped bool
	// runCtx is Run's context, set with started.
	runCtx context.Context
	// wg counts listener and resync goroutines, removed listeners' too.
	wg sync.WaitGroup

	// dueMu guards due (lock order: mu before dueMu).
	dueMu sync.Mutex
	// due holds the listeners whose resync period elapsed since the last
	// ResyncBatch was dispatched; the next ResyncBatch goes to them only.
	due map[*listener[T]]struct{}
}

// New returns an informer that lists and watches lw. Nothing happens until
// Run. Deviation from the original contract: T is constrained to Object
// (metav1.Object and runtime.Object) because reflector.New requires a
// runtime.Object.
func New[T Object, L runtime.Object](lw reflector.ListerWatcher[L], opts Options[T]) *Informer[T] {
	i := newInformer(opts)
	ropts := opts.Reflector
	if ropts.Name == "" {
		ropts.Name = i.name
	}
	if ropts.Logger == nil {
		ropts.Logger = i.log
	}
	i.source = reflector.New[T, L](lw, i.sink, ropts)
	return i
}

// newInformer builds everything but the reflector.
func newInformer[T metav1.Object](opts Options[T]) *Informer[T] {
	if opts.Transform == nil {
		opts.Transform = StripManagedFields[T]
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	name := opts.Reflector.Name
	if name == "" && opts.Resource.Resource != "" {
		name = opts.Resource.String()
	}
	if name == "" {
		var zero T
		name = fmt.Sprintf("%T", zero)
	}
	indexer := cache.NewObjectIndexer(opts.Indexers)
	queue := cache.NewQueue(cache.MetaNamespaceKeyFunc[T], indexer)
	return &Informer[T]{
		name:          name,
		indexer:       indexer,
		lister:        cache.NewLister[T](indexer, opts.Resource),
		queue:         queue,
		sink:          transformSink[T]{next: queue, transform: opts.Transform, compactor: newCompactor(opts.Compaction)},
		defaultResync: opts.ResyncPeriod,
		clock:         opts.Clock,
		log:           opts.Logger.With("informer", name),
		metrics:       opts.Metrics,
		listeners:     map[*Registration]*listener[T]{},
		due:           map[*listener[T]]struct{}{},
	}
}

// Run starts the reflector, the dispatcher and the handlers' goroutines,
// and blocks until ctx ends. It returns only after all of them stopped;
// notifications not yet delivered are dropped. An informer runs once: a
// second call logs and returns at once.
func (i *Informer[T]) Run(ctx context.Context) {
	i.mu.Lock()
	if i.started {
		i.mu.Unlock()
		i.log.Warn("informer: Run called twice; ignored")
		return
	}
	i.started, i.runCtx = true, ctx
	for _, l := range i.order {
		i.startListener(l)
	}
	i.mu.Unlock()

	var reflectorDone, popDone sync.WaitGroup
	if i.source != nil {
		reflectorDone.Go(func() { i.source.Run(ctx) })
	}
	popDone.Go(i.popLoop)
	<-ctx.Done()
	// The reflector honours ctx; once it is gone nothing feeds the queue,
	// and closing the queue ends the dispatcher.
	reflectorDone.Wait()
	i.queue.Close()
	popDone.Wait()

	i.mu.Lock()
	i.stopped = true
	ls := i.order
	i.mu.Unlock()
	for _, l := range ls {
		l.stop()
	}
	i.wg.Wait()
}

// HasSynced reports whether the cache holds the initial list: the first
// relist has been applied to the store and dispatched. It never turns false
// again. Handlers may still be working through it; see
// Registration.HasSynced.
func (i *Informer[T]) HasSynced() bool { return i.queue.HasSynced() }

// Indexer returns the cache. Read it freely; never write it (the informer
// is its only writer) and never modify the objects it returns.
func (i *Informer[T]) Indexer() *cache.ThreadSafeIndexer[T] { return i.indexer }

// Lister returns a lister over the cache; its NotFound errors name
// Options.Resource.
func (i *Informer[T]) Lister() *cache.Lister[T] { return i.lister }

// LastSyncResourceVersion is the resourceVersion of the newest state the
// reflector handed over ("" before the first list).
func (i *Informer[T]) LastSyncResourceVersion() string {
	if i.source == nil {
		return ""
	}
	return i.source.LastSyncResourceVersion()
}

// LastError is the reflector's last list or watch error, nil while
// healthy; use it to explain a cache that does not sync (forbidden, not
// found).
func (i *Informer[T]) LastError() error {
	if i.source == nil {
		return nil
	}
	return i.source.LastError()
}

// IsStarted reports whether Run has been called.
func (i *Informer[T]) IsStarted() bool {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.started
}
