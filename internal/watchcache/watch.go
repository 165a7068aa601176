package watchcache

import (
	"context"
	"errors"
	"fmt"
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
// the channel and sends the backlog) -> live (the cache dispatches into the
// channel under wmu) -> closed. A watcher may also go live directly or end
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
	// out is buffered; it is sent to and closed only by its owner (see
	// watcherState), and closed exactly once. Its capacity is limit+1: event
	// and bookmark frames never fill the last slot, which is reserved for
	// the ERROR frame that ends the watch, so ending a watcher never drops
	// a frame (the client sees a gap-free prefix, then the ERROR).
	out chan Frame
	// limit is the number of event and bookmark frames out may hold.
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

// Frames returns the channel of frames. It is closed when the watch ends;
// an ERROR frame, when sent, is the last one.
func (w *Watcher) Frames() <-chan Frame { return w.out }

// Err tells why Frames was closed: nil after Stop or the context's end,
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
		out:            make(chan Frame, size+1),
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
			w.out <- f // cannot block: the channel is new and large enough
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

// catchUp sends the backlog with blocking sends (at the client's pace),
// then follows the window until it reaches the cache revision with at most
// half of the channel in use, where it registers the watcher live and
// returns. The slack keeps a reader that just caught up from being ended by
// the next few events.
func (w *Watcher) catchUp(frames []Frame, pos int64) {
	c := w.c
	defer c.wg.Done()
	poll := handoverPollMin
	for {
		for _, f := range frames {
			select {
			case w.out <- f:
				if f.Type != watch.Bookmark {
					c.metrics.dispatched.Add(1)
				}
			case <-w.stop:
				w.finish(nil, nil)
				return
			case <-c.done:
				w.finish(nil, ErrStopped)
				return
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
// reader can drain the channel. False means the watcher ended meanwhile.
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
	// waitForReader: nothing to send, but the channel is too full to hand
	// over; wait for new events or for the reader.
	waitForReader
)

// errWatcherStopped is internal: the watcher was stopped while catching up.
var errWatcherStopped = errors.New("watcher stopped")

// nextBatch returns the next frames of a catching-up watcher, or registers
// it live when the window has nothing after pos and the channel is at most
// half full.
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
	if len(w.out) > w.limit/2 {
		return nil, pos, waitForReader, nil
	}
	c.registerLocked(w)
	return nil, pos, wentLive, nil
}

// finish ends a watcher that is not live: its catch-up goroutine, the
// caller, owns out. Catch-up sends block, so out may be full: the ERROR
// frame is sent with a blocking send (before taking c.wmu, so no other
// watcher waits on this client), unless the watch is being stopped.
func (w *Watcher) finish(status *metav1.Status, err error) {
	if status != nil {
		select {
		case w.out <- w.c.errorFrame(*status):
			status = nil // delivered
		case <-w.stop:
		case <-w.c.done:
		}
	}
	w.c.wmu.Lock()
	defer w.c.wmu.Unlock()
	w.closeLocked(status, err)
}

// closeLocked sends the optional ERROR frame and closes out. The caller
// owns out and holds c.wmu. For a live watcher the reserved slot of out
// guarantees room for the ERROR frame. A watcher stopped during catch-up
// may have no room left; its client is gone, so the frame is dropped.
func (w *Watcher) closeLocked(status *metav1.Status, err error) {
	if w.state == closed {
		return
	}
	if status != nil {
		select {
		case w.out <- w.c.errorFrame(*status):
		default:
		}
	}
	close(w.out)
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
