package watchcache

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/btree"
	"k8s.io/utils/clock"

	"github.com/setpoint-dev/setpoint/internal/storage"
)

// Cache is the watch cache of one storage prefix. See the package comment
// for its invariants and calling protocol.
//
// Locking: mu guards the cached state; wmu guards the watcher registry and
// every send to or close of a live watcher's queue. Lock order is mu
// before wmu. The run loop is the only writer of the state: it may read the
// tree without mu, and it takes wmu before releasing mu so that events are
// dispatched in the order they were applied.
type Cache struct {
	cfg   Config
	clock clock.Clock
	// encs are cfg's encoders, shared by the cache's frames.
	encs encoders
	// typeMeta serves encs (see Item.ListJSON).
	typeMeta typeMetaCache

	mu sync.RWMutex
	// objects is the current state, sorted by key. Guarded by mu (the run
	// loop reads it without mu).
	objects *btree.BTreeG[*object]
	// win holds the recent events. Guarded by mu.
	win window
	// ready is true once the first list was applied; stopped once Run
	// returned. Guarded by mu.
	ready, stopped bool
	// rev is the cache revision. Written under mu, read atomically.
	rev atomic.Int64

	// revMu guards revWait and revWaitUsed: revWait is closed (and
	// replaced) when rev advances, if someone is waiting on it.
	revMu       sync.Mutex
	revWait     chan struct{}
	revWaitUsed bool

	wmu sync.Mutex
	// all holds the live watchers of every namespace, byNS the live
	// watchers of one namespace. Guarded by wmu.
	all  watcherList
	byNS map[string]*watcherList
	// indexes hold the live watchers whose field selector requires an
	// exact value of a trigger field (see fieldIndex); such a watcher is
	// in no other list. Guarded by wmu.
	indexes []fieldIndex
	// dispatchedRev: every event with a revision <= dispatchedRev has been
	// dispatched to the live watchers. Bookmarks carry it. Guarded by wmu.
	dispatchedRev int64

	// stream is the current storage watch (nil while listing).
	stream atomic.Pointer[streamBox]
	// readyCh is closed when ready becomes true; done when Run returns.
	readyCh, done chan struct{}
	// bookmarkWake nudges the bookmark loop when a watcher registers.
	bookmarkWake chan struct{}
	// wg counts catch-up goroutines and the bookmark loop.
	wg sync.WaitGroup

	metrics struct {
		watchers                                       atomic.Int64
		received, dispatched, tooSlow, expired, relist atomic.Uint64
	}
}

type streamBox struct{ s storage.WatchStream }

// New builds a cache for cfg; it panics if a required field is missing.
// Call Run to start it.
func New(cfg Config) *Cache {
	cfg = cfg.withDefaults()
	c := &Cache{
		cfg:          cfg,
		clock:        cfg.Clock,
		encs:         encoders{json: cfg.Encode, proto: cfg.EncodeProto},
		objects:      btree.NewG(32, lessObject),
		win:          newWindow(cfg.WindowCapacity),
		revWait:      make(chan struct{}),
		byNS:         make(map[string]*watcherList),
		indexes:      newFieldIndexes(cfg.IndexFields),
		readyCh:      make(chan struct{}),
		done:         make(chan struct{}),
		bookmarkWake: make(chan struct{}, 1),
	}
	c.encs.typeMeta = &c.typeMeta
	return c
}

// Revision returns the revision the cache is current to: every event under
// the prefix up to it has been applied. It advances with events and with
// progress notifications; 0 before the first list.
func (c *Cache) Revision() int64 { return c.rev.Load() }

// WaitReady blocks until the first list has been applied. It fails with the
// context's error, or ErrStopped if Run returned first.
func (c *Cache) WaitReady(ctx context.Context) error {
	select {
	case <-c.readyCh:
		return nil
	case <-c.done:
		return ErrStopped
	case <-ctx.Done():
		return fmt.Errorf("wait for watch cache of %s: %w", c.cfg.Prefix, ctx.Err())
	}
}

// WaitForRevision returns nil once Revision() >= rev. While behind, it asks
// the storage watch for a progress notification, so an idle prefix catches
// up with the store, and asks again whenever the revision moved without
// reaching rev and every progressRetry: a notification may report a
// position taken before the store published rev (a commit is counted
// before it is published to watchers), and a publish that carries no event
// of this prefix moves the watch's position without telling the cache.
// After Config.ProgressTimeout it fails with a *TooLargeError; it also
// fails with the context's error or ErrStopped.
func (c *Cache) WaitForRevision(ctx context.Context, rev int64) error {
	if c.Revision() >= rev {
		return nil
	}
	timer := c.clock.NewTimer(c.cfg.ProgressTimeout)
	defer timer.Stop()
	retry := c.clock.NewTimer(progressRetry)
	defer retry.Stop()
	requested := false
	for {
		ch := c.revChanged()
		if c.Revision() >= rev {
			return nil
		}
		if !requested {
			requested = c.requestProgress()
		}
		select {
		case <-ch:
			requested = false
		case <-retry.C():
			requested = false
			retry.Reset(progressRetry)
		case <-timer.C():
			return &TooLargeError{Requested: rev, Current: c.Revision()}
		case <-c.done:
			return ErrStopped
		case <-ctx.Done():
			return fmt.Errorf("wait for revision %d of %s: %w", rev, c.cfg.Prefix, ctx.Err())
		}
	}
}

// progressRetry is how often WaitForRevision asks again for a progress
// notification while the cache stays behind.
const progressRetry = 50 * time.Millisecond

// revChanged returns a channel closed at the next advance of the revision.
func (c *Cache) revChanged() <-chan struct{} {
	c.revMu.Lock()
	defer c.revMu.Unlock()
	c.revWaitUsed = true
	return c.revWait
}

// setRevLocked advances the revision and wakes the waiters. c.mu is held
// for writing.
func (c *Cache) setRevLocked(rev int64) {
	c.rev.Store(rev)
	c.revMu.Lock()
	if c.revWaitUsed {
		close(c.revWait)
		c.revWait = make(chan struct{})
		c.revWaitUsed = false
	}
	c.revMu.Unlock()
}

// requestProgress asks the current storage watch for a progress
// notification; false when there is no watch right now (the run loop asks
// for one whenever it starts a watch).
func (c *Cache) requestProgress() bool {
	b := c.stream.Load()
	if b == nil {
		return false
	}
	b.s.RequestProgress()
	return true
}

// Metrics returns a snapshot of the cache's counters.
func (c *Cache) Metrics() Metrics {
	c.mu.RLock()
	objects, events := c.objects.Len(), c.win.n
	c.mu.RUnlock()
	return Metrics{
		Watchers:         c.metrics.watchers.Load(),
		EventsReceived:   c.metrics.received.Load(),
		EventsDispatched: c.metrics.dispatched.Load(),
		WatchersTooSlow:  c.metrics.tooSlow.Load(),
		WatchersExpired:  c.metrics.expired.Load(),
		Relists:          c.metrics.relist.Load(),
		Objects:          objects,
		WindowEvents:     events,
		Revision:         c.Revision(),
	}
}
