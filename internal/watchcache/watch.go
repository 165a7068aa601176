package watchcache

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"
)

// Mode says where a watch starts.
type Mode int

const (
	// FromRevision delivers exactly the events with a revision greater than
	// WatchOptions.ResourceVersion, in order. A revision older than the
	// window fails with *ExpiredError; one newer than the cache waits for it
	// like WaitForRevision (and may fail with *TooLargeError).
	FromRevision Mode = iota
	// InitialEvents first delivers a synthetic ADDED event for every
	// matching object at the cache revision R, then the events after R.
	// Used for resourceVersion "0"/"" plain watches and for
	// sendInitialEvents=true. A ResourceVersion > 0 is the minimum R (the
	// cache waits for it first).
	InitialEvents
)

// WatchOptions select what a watch delivers.
type WatchOptions struct {
	// Namespace limits the watch to one namespace; "" watches all. Ignored
	// for cluster-scoped resources.
	Namespace string
	// Label and Field select objects; nil selects everything.
	Label labels.Selector
	Field fields.Selector
	Mode  Mode
	// ResourceVersion: see Mode.
	ResourceVersion int64
	// SendInitialEvents, with InitialEvents, ends the initial ADDED events
	// with a BOOKMARK at R annotated k8s.io/initial-events-end: "true".
	SendInitialEvents bool
	// AllowBookmarks enables periodic BOOKMARK frames (every
	// Config.BookmarkInterval) and one shortly before Deadline. Bookmarks
	// are best effort: skipped when the watcher's buffer is full.
	AllowBookmarks bool
	// Deadline is when the server will end the watch (from timeoutSeconds);
	// zero means none. The cache does not end the watch itself.
	Deadline time.Time
	// BufferSize overrides Config.WatcherBuffer when > 0.
	BufferSize int
}

// watcherState is the lifecycle of a Watcher: catchingUp (a goroutine owns
// the queue and sends the backlog) -> live (the cache dispatches into the
// queue under wmu) -> closed. A watcher may also go live directly or end
// while catching up.
type watcherState int

const (
	catchingUp watcherState = iota
	live
	closed
)

// Watcher is one open watch. Read Frames until it is closed; call Stop when
// done with it (also done by cancelling the context given to Watch).
type Watcher struct {
	c              *Cache
	f              filter
	allowBookmarks bool
	// q holds the frames sent and not yet received; it is sent to and
	// closed only by its owner (see watcherState), and closed exactly once.
	// Event and bookmark frames never make it hold more than limit; the
	// ERROR frame that ends the watch is added beyond the limit, so ending
	// a watcher never drops a frame (the client sees a gap-free prefix,
	// then the ERROR).
	q *frameQueue
	// limit is the number of event and bookmark frames q may hold.
	limit int
	// stop is closed by Stop.
	stop     chan struct{}
	stopOnce sync.Once
	// stopCtx releases the context.AfterFunc registered by Watch.
	stopCtx func() bool

	// The fields below are guarded by c.wmu.
	state watcherState
	// list and slot locate a live watcher in the registry.
	list *watcherList
	slot int
	// nextBookmark and deadlineBookmark are the due times of the next
	// periodic and of the pre-deadline bookmark; zero when none.
	nextBookmark, deadlineBookmark time.Time
	// err is why the watch ended (nil for Stop); valid once out is closed.
	err error
}

// Frames yields the watch's frames in order, waiting for each, until the
// watch ends; an ERROR frame, when sent, is the last one. One goroutine
// receives a watcher's frames (through Frames or Next).
func (w *Watcher) Frames() iter.Seq[Frame] {
	return func(yield func(Frame) bool) {
		for {
			f, ok := w.q.next(nil)
			if !ok || !yield(f) {
				return
			}
		}
	}
}

// Next waits for the next frame. False means the watch ended (after its
// last frame) or ctx ended first.
func (w *Watcher) Next(ctx context.Context) (Frame, bool) {
	return w.q.next(ctx.Done())
}

// Buffered is the number of frames sent to the watcher and not yet
// received: zero means the receiver is up to date (a stream writer flushes
// then).
func (w *Watcher) Buffered() int { return w.q.len() }

// Err tells why the frames ended: nil after Stop or the context's end,
// *ExpiredError or ErrWatcherTooSlow after an ERROR frame, ErrStopped when
// the cache stopped. Nil while the watch runs.
func (w *Watcher) Err() error {
	w.c.wmu.Lock()
	defer w.c.wmu.Unlock()
	return w.err
}

// Stop ends the watch; Frames is closed soon after (at once for a live
// watcher). Safe to call more than once and concurrently.
func (w *Watcher) Stop() {
	w.stopOnce.Do(func() { close(w.stop) })
	c := w.c
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if w.state == live {
		c.endLiveLocked(w, nil, nil)
	}
}

// Watch opens a watch. See Mode for where it starts and WatchOptions for
// what it delivers. It fails with ErrNotReady, ErrStopped, *ExpiredError,
// *TooLargeError or the context's error. The watch ends when ctx ends.
func (c *Cache) Watch(ctx context.Context, opts WatchOptions) (*Watcher, error) {
	if opts.ResourceVersion > c.Revision() {
		if err := c.WaitForRevision(ctx, opts.ResourceVersion); err != nil {
			return nil, err
		}
	}
	w := c.newWatcher(opts)
	w.stopCtx = context.AfterFunc(ctx, w.Stop)
	if err := c.start(w, opts); err != nil {
		w.stopCtx()
		return nil, err
	}
	return w, nil
}

func (c *Cache) newWatcher(opts WatchOptions) *Watcher {
	ns := opts.Namespace
	if !c.cfg.Namespaced {
		ns = ""
	}
	size := opts.BufferSize
	if size <= 0 {
		size = c.cfg.WatcherBuffer
	}
	w := &Watcher{
		c:              c,
		f:              newFilter(ns, opts.Label, opts.Field),
		allowBookmarks: opts.AllowBookmarks,
		q:              newFrameQueue(),
		limit:          size,
		stop:           make(chan struct{}),
	}
	if opts.AllowBookmarks {
		now := c.clock.Now()
		w.nextBookmark = now.Add(c.cfg.BookmarkInterval)
		if !opts.Deadline.IsZero() {
			w.deadlineBookmark = opts.Deadline.Add(-deadlineBookmarkLead)
		}
	}
	return w
}

// start computes the watcher's backlog and either delivers it at once and
// registers the watcher live, or hands it to a catch-up goroutine.
func (c *Cache) start(w *Watcher, opts WatchOptions) error {
	c.mu.RLock()
	defer c.mu.RUnlock()
	switch {
	case c.stopped:
		return ErrStopped
	case !c.ready:
		return ErrNotReady
	}
	var frames []Frame
	var pos int64
	switch opts.Mode {
	case FromRevision:
		if opts.ResourceVersion < c.win.after {
			return &ExpiredError{Requested: opts.ResourceVersion, Oldest: c.win.after}
		}
		frames, pos = c.collectLocked(&w.f, opts.ResourceVersion, nil, w.limit/2+1)
	case InitialEvents:
		frames, pos = c.snapshotLocked(&w.f), c.rev.Load()
		if opts.SendInitialEvents {
			frames = append(frames, c.bookmarkFrame(pos, true))
		}
	default:
		return fmt.Errorf("watch %s: unknown mode %d", c.cfg.Prefix, opts.Mode)
	}
	c.metrics.watchers.Add(1)
	c.wmu.Lock()
	if pos == c.rev.Load() && len(frames) <= w.limit/2 {
		for _, f := range frames {
			w.q.push(f) // within the limit: at most half of it
		}
		c.metrics.dispatched.Add(countEvents(frames))
		select {
		case <-w.stop: // the context ended before the watch started
			w.closeLocked(nil, nil)
		default:
			c.registerLocked(w)
		}
		c.wmu.Unlock()
		return nil
	}
	c.wmu.Unlock()
	c.wg.Add(1)
	go w.catchUp(frames, pos)
	return nil
}

// snapshotLocked returns the ADDED frames of the matching current objects,
// sorted by key. c.mu is held.
func (c *Cache) snapshotLocked(f *filter) []Frame {
	var frames []Frame
	visit := func(o *object) bool {
		if f.selects(o) {
			frames = append(frames, o.frame(watch.Added, c))
		}
		return true
	}
	c.ascendLocked(f.namespace, visit)
	return frames
}

// collectLocked appends to buf the frames f admits of the window events
// after pos, stopping once buf holds limit frames. It returns the new
// position: the last examined event, or the cache revision when the window
// was exhausted. c.mu is held; pos >= c.win.after.
func (c *Cache) collectLocked(f *filter, pos int64, buf []Frame, limit int) ([]Frame, int64) {
	i := c.win.firstAfter(pos)
	for ; i < c.win.n && len(buf) < limit; i++ {
		e := c.win.at(i)
		if fr, ok := f.frameFor(e, c); ok {
			buf = append(buf, fr)
		}
		pos = e.rev
	}
	if i == c.win.n {
		pos = c.rev.Load()
	}
	return buf, pos
}

// catchUp sends the backlog at the client's pace (waiting for room below
// the limit), then follows the window until it reaches the cache revision
// with at most half of the limit in use, where it registers the watcher
// live and returns. The slack keeps a reader that just caught up from being
// ended by the next few events.
func (w *Watcher) catchUp(frames []Frame, pos int64) {
	c := w.c
	defer c.wg.Done()
	poll := handoverPollMin
	for {
		for _, f := range frames {
			if !w.q.waitForRoom(w.limit, w.stop, c.done) {
				w.finish(nil, w.whyStopped())
				return
			}
			w.q.push(f)
			if f.Type != watch.Bookmark {
				c.metrics.dispatched.Add(1)
			}
		}
		advanced := c.revChanged()
		var step catchUpStep
		var err error
		frames, pos, step, err = c.nextBatch(w, pos, frames[:0])
		switch {
		case err == errWatcherStopped:
			w.finish(nil, nil)
			return
		case err != nil:
			w.finish(statusOf(err), err)
			return
		case step == wentLive:
			return
		case step == sendMore:
			poll = handoverPollMin
			continue
		}
		if !w.waitToHandOver(advanced, poll) {
			return
		}
		poll = min(2*poll, handoverPollMax)
	}
}

// waitToHandOver waits for a new revision, or for poll to pass so the
// reader can drain its frames. False means the watcher ended meanwhile.
func (w *Watcher) waitToHandOver(advanced <-chan struct{}, poll time.Duration) bool {
	c := w.c
	t := c.clock.NewTimer(poll)
	defer t.Stop()
	select {
	case <-advanced:
	case <-t.C():
	case <-w.stop:
		w.finish(nil, nil)
		return false
	case <-c.done:
		w.finish(nil, ErrStopped)
		return false
	}
	return true
}

// catchUpStep is what nextBatch tells a catching-up watcher to do.
type catchUpStep int

const (
	// sendMore: send the returned frames, then ask again.
	sendMore catchUpStep = iota
	// wentLive: the watcher is registered; the goroutine is done.
	wentLive
	// waitForReader: nothing to send, but too many frames wait to hand
	// over; wait for new events or for the reader.
	waitForReader
)

// errWatcherStopped is internal: the watcher was stopped while catching up.
var errWatcherStopped = errors.New("watcher stopped")

// nextBatch returns the next frames of a catching-up watcher, or registers
// it live when the window has nothing after pos and at most half of its
// limit is in use.
func (c *Cache) nextBatch(w *Watcher, pos int64, buf []Frame) ([]Frame, int64, catchUpStep, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.stopped {
		return nil, pos, sendMore, ErrStopped
	}
	if pos < c.win.after {
		c.metrics.expired.Add(1)
		return nil, pos, sendMore, &ExpiredError{Requested: pos, Oldest: c.win.after}
	}
	buf, pos = c.collectLocked(&w.f, pos, buf, catchUpBatch)
	if len(buf) > 0 {
		return buf, pos, sendMore, nil
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	select {
	case <-w.stop:
		return nil, pos, sendMore, errWatcherStopped
	default:
	}
	if w.q.len() > w.limit/2 {
		return nil, pos, waitForReader, nil
	}
	c.registerLocked(w)
	return nil, pos, wentLive, nil
}

// finish ends a watcher that is not live: its catch-up goroutine, the
// caller, owns q.
func (w *Watcher) finish(status *metav1.Status, err error) {
	w.c.wmu.Lock()
	defer w.c.wmu.Unlock()
	w.closeLocked(status, err)
}

// whyStopped is the error a catching-up watcher ends with when it stops
// waiting for room: nil for Stop, ErrStopped when the cache stopped.
func (w *Watcher) whyStopped() error {
	select {
	case <-w.stop:
		return nil
	case <-w.c.done:
		return ErrStopped
	default:
		return nil
	}
}

// closeLocked adds the optional ERROR frame and closes q. The caller owns
// q and holds c.wmu. The ERROR frame may go beyond the limit.
func (w *Watcher) closeLocked(status *metav1.Status, err error) {
	if w.state == closed {
		return
	}
	if status != nil {
		w.q.push(w.c.errorFrame(*status))
	}
	w.q.close()
	w.state, w.err = closed, err
	w.c.metrics.watchers.Add(-1)
	w.stopCtx()
}

// statusOf returns the ERROR frame status of an error ending a watcher.
func statusOf(err error) *metav1.Status {
	if e, ok := err.(*ExpiredError); ok {
		st := e.Status()
		return &st
	}
	return nil
}

func countEvents(frames []Frame) uint64 {
	var n uint64
	for _, f := range frames {
		if f.Type != watch.Bookmark {
			n++
		}
	}
	return n
}
