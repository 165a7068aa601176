package watchcache

import (
	"context"
	"time"

	"k8s.io/utils/clock"
)

// runBookmarks sends the due bookmarks and sleeps until the next one is due
// or a watcher that allows bookmarks registers. It ends with ctx.
func (c *Cache) runBookmarks(ctx context.Context) {
	defer c.wg.Done()
	for {
		now := c.clock.Now()
		next := c.sendDueBookmarks(now)
		var t clock.Timer
		var fire <-chan time.Time
		if !next.IsZero() {
			t = c.clock.NewTimer(next.Sub(now))
			fire = t.C()
		}
		select {
		case <-ctx.Done():
		case <-fire:
		case <-c.bookmarkWake:
		}
		if t != nil {
			t.Stop()
		}
		if ctx.Err() != nil {
			return
		}
	}
}

// sendDueBookmarks sends a bookmark to every live watcher whose periodic or
// pre-deadline bookmark is due at now, and returns when the next one is due
// (zero: none). The bookmark carries dispatchedRev, so it never goes below
// an event already sent and the watcher has seen every event up to it. A
// watcher with its limit of frames waiting skips the bookmark.
func (c *Cache) sendDueBookmarks(now time.Time) time.Time {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	var shared *Frame
	var earliest time.Time
	visit := func(w *Watcher) {
		due := w.bookmarkDue()
		if due.IsZero() {
			return
		}
		if !due.After(now) {
			if shared == nil {
				f := c.bookmarkFrame(c.dispatchedRev, false)
				shared = &f
			}
			w.q.pushWithin(*shared, w.limit) // best effort: skipped when the buffer is full
			if !w.deadlineBookmark.IsZero() && !w.deadlineBookmark.After(now) {
				w.deadlineBookmark = time.Time{}
			}
			if !w.nextBookmark.After(now) {
				w.nextBookmark = now.Add(c.cfg.BookmarkInterval)
			}
			due = w.bookmarkDue()
		}
		if earliest.IsZero() || due.Before(earliest) {
			earliest = due
		}
	}
	c.eachListLocked(func(l *watcherList) {
		for _, w := range l.ws {
			visit(w)
		}
	})
	return earliest
}

// bookmarkDue is the earlier of the watcher's bookmark times (zero: none).
// c.wmu is held.
func (w *Watcher) bookmarkDue() time.Time {
	a, b := w.nextBookmark, w.deadlineBookmark
	switch {
	case a.IsZero():
		return b
	case b.IsZero() || a.Before(b):
		return a
	}
	return b
}
