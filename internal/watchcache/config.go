package watchcache

import (
	"fmt"
	"io"
	"log/slog"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/clock"

	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/storage"
)

// Defaults of the optional Config fields.
const (
	DefaultWindowCapacity   = 10000
	DefaultWatcherBuffer    = 1000
	DefaultSlowWatcherWait  = 100 * time.Millisecond
	DefaultBookmarkInterval = time.Minute
	DefaultProgressTimeout  = 3 * time.Second
	DefaultListPageSize     = 1000

	// deadlineBookmarkLead is how long before a watch's deadline its last
	// bookmark is sent, so the client resumes from a fresh revision.
	deadlineBookmarkLead = 2 * time.Second
	// maxBackoff caps the wait between failed storage list/watch attempts.
	maxBackoff = 5 * time.Second
	// catchUpBatch bounds how many window events one catch-up step copies
	// while holding the read lock.
	catchUpBatch = 512
	// handoverPollMin and handoverPollMax bound how often a caught-up
	// watcher with more than half of its limit waiting checks it again.
	handoverPollMin = 10 * time.Millisecond
	handoverPollMax = time.Second
)

// Store is what the cache needs from storage: lists and one watch.
type Store interface {
	storage.Reader
	storage.Watcher
}

// Config describes one cached resource. Fields marked required must be set;
// New panics otherwise (a wiring bug).
type Config struct {
	// Store is read and watched (required).
	Store Store
	// Prefix is the storage prefix of the resource, ending in "/"
	// (required).
	Prefix string
	// Decode turns a stored value into an object whose
	// metadata.resourceVersion is kv.ModRevision (required). For a delete
	// the cache passes the deleted value with ModRevision = the deletion
	// revision. It must return a fresh object on every call. A value it
	// cannot decode is skipped (logged), unless its error carries a
	// Kubernetes Status (apierrors.APIStatus: a conversion webhook that
	// failed), which says the value may decode later: a list then fails
	// and is retried, keeping the state it had, and an event ends every
	// live watcher with an ERROR frame carrying that Status, then the
	// cache lists again.
	Decode func(kv storage.KeyValue) (runtime.Object, error)
	// Attrs returns the labels and selectable fields of an object
	// (required).
	Attrs registry.AttrFunc
	// IndexFields are the kind's trigger fields besides metadata.name,
	// which is always one: selectable fields (in Attrs' set) by whose
	// exact value watchers are indexed. A watcher whose field selector
	// requires field=value for a trigger field is offered only the events
	// whose new or old object has that value, instead of every event of
	// its namespace (pods' spec.nodeName: each node's watcher sees its own
	// pods' events only).
	IndexFields []string
	// Namespaced is true when keys are Prefix+"<namespace>/<name>".
	Namespaced bool
	// NewObject returns an empty object of the kind with apiVersion and kind
	// set; bookmarks are built from it (required).
	NewObject func() runtime.Object
	// Encode writes the JSON encoding of one object (required). It must not
	// mutate obj (objects are shared) and may end its output with a newline.
	Encode func(obj runtime.Object, w io.Writer) error
	// EncodeProto writes the protobuf encoding of one object as
	// kube-apiserver embeds it in a protobuf watch event ("k8s\x00" and a
	// runtime.Unknown); it must also encode a metav1.Status. Nil for kinds
	// without a protobuf form: Frame.ProtoBytes then fails.
	EncodeProto func(obj runtime.Object, w io.Writer) error

	// Clock drives bookmarks, timeouts, retry backoff and the dispatch's
	// wait for a full watcher (SlowWatcherWait); nil means the real clock.
	Clock clock.Clock
	// WindowCapacity is how many recent events are kept for watches from a
	// past revision (default DefaultWindowCapacity).
	WindowCapacity int
	// WatcherBuffer is the default limit of the frames waiting for a
	// watcher's reader (default DefaultWatcherBuffer): a live watcher that
	// falls further behind is ended. Memory follows the frames actually
	// waiting, not this limit.
	WatcherBuffer int
	// SlowWatcherWait is how long, at most, the dispatch of one event waits
	// in all for watchers whose buffer is full to make room before ending
	// them (default DefaultSlowWatcherWait; negative: no wait). A consumer
	// that stalls briefly (a busy CPU, a garbage collection) then slows
	// the dispatch a little instead of having to relist; one that stays
	// behind is still ended. Kubernetes' cacher waits the same way.
	SlowWatcherWait time.Duration
	// BookmarkInterval is the period of bookmarks for watchers that allow
	// them (default DefaultBookmarkInterval).
	BookmarkInterval time.Duration
	// ProgressTimeout bounds WaitForRevision (default
	// DefaultProgressTimeout).
	ProgressTimeout time.Duration
	// ListPageSize is the page size of the storage lists (default
	// DefaultListPageSize).
	ListPageSize int
	// Logger receives the cache's logs; nil means slog.Default().
	Logger *slog.Logger
}

// withDefaults validates cfg and fills its optional fields.
func (cfg Config) withDefaults() Config {
	switch {
	case cfg.Store == nil:
		panic("watchcache: Config.Store is required")
	case cfg.Prefix == "":
		panic("watchcache: Config.Prefix is required")
	case cfg.Decode == nil:
		panic("watchcache: Config.Decode is required")
	case cfg.Attrs == nil:
		panic("watchcache: Config.Attrs is required")
	case cfg.NewObject == nil:
		panic("watchcache: Config.NewObject is required")
	case cfg.Encode == nil:
		panic("watchcache: Config.Encode is required")
	}
	if _, err := meta.Accessor(cfg.NewObject()); err != nil {
		panic(fmt.Sprintf("watchcache: Config.NewObject must return an object with metadata: %v", err))
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.WindowCapacity <= 0 {
		cfg.WindowCapacity = DefaultWindowCapacity
	}
	if cfg.WatcherBuffer <= 0 {
		cfg.WatcherBuffer = DefaultWatcherBuffer
	}
	if cfg.SlowWatcherWait == 0 {
		cfg.SlowWatcherWait = DefaultSlowWatcherWait
	}
	if cfg.BookmarkInterval <= 0 {
		cfg.BookmarkInterval = DefaultBookmarkInterval
	}
	if cfg.ProgressTimeout <= 0 {
		cfg.ProgressTimeout = DefaultProgressTimeout
	}
	if cfg.ListPageSize <= 0 {
		cfg.ListPageSize = DefaultListPageSize
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	cfg.Logger = cfg.Logger.With("prefix", cfg.Prefix)
	return cfg
}

// Metrics is a snapshot of the cache's counters, for the server to export.
// Counters only grow; Watchers, Objects, WindowEvents and Revision are
// gauges.
type Metrics struct {
	// Watchers is the number of open watchers.
	Watchers int64
	// EventsReceived counts storage events applied to the cache.
	EventsReceived uint64
	// EventsDispatched counts event frames delivered into watcher queues
	// (live dispatch and catch-up; not bookmarks).
	EventsDispatched uint64
	// WatchersTooSlow counts watchers ended because their buffer was full.
	WatchersTooSlow uint64
	// WatchersExpired counts watchers ended because the cache no longer
	// served their position (a re-list, or the window overran a catch-up).
	WatchersExpired uint64
	// Relists counts storage lists (the first one included).
	Relists uint64
	// Objects is the number of cached objects, WindowEvents the number of
	// events held in the window.
	Objects, WindowEvents int
	// Revision is the cache revision.
	Revision int64
}
