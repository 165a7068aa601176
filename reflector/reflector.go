package reflector

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/clock"
)

// ListerWatcher is what a reflector lists and watches. *rest.Resource[T, L]
// satisfies it (with L the list type).
//
//   - List returns one page or the whole collection as opts asks
//     (Limit/Continue, ResourceVersion and ResourceVersionMatch). An expired
//     continue token or a resourceVersion the server no longer has must be
//     an error for which apierrors.IsResourceExpired or IsGone holds.
//   - Watch opens a stream. Its events carry the reflector's object type T
//     (ADDED, MODIFIED, DELETED, BOOKMARK) or a *metav1.Status (ERROR). Its
//     result channel must close when the stream ends or ctx ends; the
//     reflector always drains it or calls Stop.
type ListerWatcher[L runtime.Object] interface {
	List(ctx context.Context, opts metav1.ListOptions) (L, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
}

// Sink receives what the reflector saw, in order, from the single goroutine
// running Run. *cache.Queue[T] satisfies it.
//
//   - Replace(list, rv) hands over the complete state at rv after every
//     (re)list; objects the sink knows that are absent from list have
//     vanished.
//   - Add, Update, Delete carry watch events after the last Replace.
//
// An error returned by any method ends the current list or watch; the
// reflector backs off and relists (a sink that lost an event is only
// repaired by a full Replace).
type Sink[T any] interface {
	Add(obj T) error
	Update(obj T) error
	Delete(obj T) error
	Replace(list []T, resourceVersion string) error
}

// Options configure a Reflector. The zero value of every field selects the
// documented default.
type Options struct {
	// Name labels logs and errors, e.g. "pods".
	Name string
	// PageSize is the list page size (Limit); default 500.
	PageSize int64
	// WatchList selects streaming lists (a watch with sendInitialEvents).
	// nil: try it and fall back to list+watch for the reflector's lifetime
	// if the server rejects it; false: never; true: always try it first too
	// (a server that rejects it still gets list+watch).
	WatchList *bool
	// MinWatchTimeout is the shortest client watch timeout; each watch asks
	// the server for a random timeout in [MinWatchTimeout,
	// 2*MinWatchTimeout). Default 5 minutes.
	MinWatchTimeout time.Duration
	// Backoff paces retries after failures.
	Backoff Backoff
	// Clock times backoff and watch durations; default clock.RealClock{}.
	Clock clock.WithTicker
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Selectors adjusts the options of every list and watch (label and
	// field selectors). ResourceVersion, ResourceVersionMatch, Limit,
	// Continue, Watch, AllowWatchBookmarks, SendInitialEvents and
	// TimeoutSeconds are owned by the reflector and overwritten after it.
	Selectors func(*metav1.ListOptions)
}

const (
	defaultPageSize        = 500
	defaultMinWatchTimeout = 5 * time.Minute
)

// Reflector keeps a Sink in step with one collection on an API server: it
// lists, then watches from the list's resourceVersion, and relists when the
// server no longer has the history it needs. See the package
// documentation for the protocol.
type Reflector[T runtime.Object, L runtime.Object] struct {
	lw    ListerWatcher[L]
	sink  Sink[T]
	name  string
	opts  Options
	clock clock.WithTicker
	log   *slog.Logger

	// rnd draws watch timeouts and backoff jitter; used only by Run's
	// goroutine.
	rnd *rand.Rand
	// backoff is used only by Run's goroutine.
	backoff *backoffState

	mu sync.Mutex
	// lastSyncRV is the resourceVersion of the newest state handed to the
	// sink (a Replace, an event or a bookmark); "" before the first list.
	// Guarded by mu.
	lastSyncRV string
	// lastErr is the last list or watch failure; cleared by a successful
	// list. Guarded by mu.
	lastErr error
	// rvUnavailable is set when the server said lastSyncRV is too old (410)
	// or too new; the next list is then a consistent one (RV ""). Run's
	// goroutine only.
	rvUnavailable bool
	// exactRV is the resourceVersion handed over by the last list when that
	// list was an exact read (paginated at a specific version, served from
	// storage history), "" otherwise. A watch that finds exactly this
	// position gone shows that relisting at it would only read the same
	// expired history again. Run's goroutine only.
	exactRV string
	// streamingOff is set once the server has rejected a streaming list;
	// lists are then paginated for the reflector's lifetime. Run's
	// goroutine only.
	streamingOff bool
	// pageSizeSet: Options.PageSize was given, so every list is paginated.
	pageSizeSet bool
	// paginated: the first list (at "0") came back in pages, so the server
	// serves paginated lists itself and relists keep the page size. When
	// it came back whole (from a watch cache), relists at a version ask
	// for no limit so the cache can answer them too. Run's goroutine only.
	paginated bool
}

// New returns a reflector that lists and watches lw into sink. T is the
// object type of watch events and list items (a pointer to an API struct,
// or *unstructured.Unstructured); L is the list type. Nothing happens
// until Run.
func New[T runtime.Object, L runtime.Object](lw ListerWatcher[L], sink Sink[T], opts Options) *Reflector[T, L] {
	pageSizeSet := opts.PageSize > 0
	if opts.PageSize <= 0 {
		opts.PageSize = defaultPageSize
	}
	if opts.MinWatchTimeout <= 0 {
		opts.MinWatchTimeout = defaultMinWatchTimeout
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Name == "" {
		var zero T
		opts.Name = typeName(zero)
	}
	r := &Reflector[T, L]{
		lw: lw, sink: sink, name: opts.Name, opts: opts, clock: opts.Clock,
		log: opts.Logger.With("reflector", opts.Name),
		rnd: rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64())),
	}
	r.backoff = newBackoff(opts.Backoff, opts.Clock, r.rnd)
	r.pageSizeSet = pageSizeSet
	r.streamingOff = opts.WatchList != nil && !*opts.WatchList
	return r
}

// LastSyncResourceVersion is the resourceVersion of the newest state the
// reflector has handed to its sink (advanced by relists, events and
// bookmarks); "" before the first list completes. Safe from any goroutine.
func (r *Reflector[T, L]) LastSyncResourceVersion() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lastSyncRV
}

// LastError is the last list or watch failure (for example a 403 Forbidden
// or 404 NotFound wrapped with context), nil when the reflector is healthy.
// It is cleared when a list succeeds. Safe from any goroutine.
func (r *Reflector[T, L]) LastError() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lastErr
}

func (r *Reflector[T, L]) setLastSyncRV(rv string) {
	r.mu.Lock()
	r.lastSyncRV = rv
	r.mu.Unlock()
}

func (r *Reflector[T, L]) setError(err error) {
	r.mu.Lock()
	r.lastErr = err
	r.mu.Unlock()
}

// Run lists and watches until ctx ends, backing off after failures. It
// returns only once every request it started has ended. Call it once.
func (r *Reflector[T, L]) Run(ctx context.Context) {
	r.log.Debug("starting")
	defer r.log.Debug("stopped")
	for ctx.Err() == nil {
		err := r.listAndWatch(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			r.setError(err)
			r.log.Warn("list and watch failed", "err", err)
		}
		if !r.backoff.wait(ctx) {
			return
		}
	}
}

// watchTimeout draws the timeout of one watch request.
func (r *Reflector[T, L]) watchTimeout() *int64 {
	minT := r.opts.MinWatchTimeout
	d := minT + time.Duration(r.rnd.Int64N(int64(minT)))
	secs := int64(d / time.Second)
	if secs < 1 {
		secs = 1
	}
	return &secs
}

// baseOptions are the caller's selectors with everything the reflector
// owns cleared.
func (r *Reflector[T, L]) baseOptions() metav1.ListOptions {
	var o metav1.ListOptions
	if r.opts.Selectors != nil {
		r.opts.Selectors(&o)
	}
	o.ResourceVersion, o.ResourceVersionMatch, o.Limit, o.Continue = "", "", 0, ""
	o.Watch, o.AllowWatchBookmarks, o.SendInitialEvents, o.TimeoutSeconds = false, false, nil, nil
	return o
}
