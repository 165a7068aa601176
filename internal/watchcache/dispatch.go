package watchcache

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// watcherList is an unordered set of live watchers; a watcher's slot is its
// index. Guarded by Cache.wmu.
type watcherList struct {
	ws []*Watcher
}

func (l *watcherList) add(w *Watcher) {
	w.list, w.slot = l, len(l.ws)
	l.ws = append(l.ws, w)
}

// remove swaps the last watcher into w's slot.
func (l *watcherList) remove(w *Watcher) {
	last := len(l.ws) - 1
	moved := l.ws[last]
	l.ws[w.slot], moved.slot = moved, w.slot
	l.ws[last] = nil
	l.ws = l.ws[:last]
	w.list = nil
}

// registerLocked makes w live: from now on the cache dispatches into its
// channel. c.wmu is held.
func (c *Cache) registerLocked(w *Watcher) {
	w.state = live
	if w.f.namespace == "" {
		c.all.add(w)
	} else {
		l := c.byNS[w.f.namespace]
		if l == nil {
			l = &watcherList{}
			c.byNS[w.f.namespace] = l
		}
		l.add(w)
	}
	if w.allowBookmarks {
		select {
		case c.bookmarkWake <- struct{}{}:
		default:
		}
	}
}

// endLiveLocked unregisters a live watcher and closes it, after an ERROR
// frame with status if not nil. c.wmu is held.
func (c *Cache) endLiveLocked(w *Watcher, status *metav1.Status, err error) {
	l := w.list
	l.remove(w)
	if l != &c.all && len(l.ws) == 0 {
		delete(c.byNS, w.f.namespace)
	}
	w.closeLocked(status, err)
}

// forEachLiveLocked calls fn for every live watcher; fn may end it.
// c.wmu is held.
func (c *Cache) forEachLiveLocked(fn func(w *Watcher)) {
	ws := append([]*Watcher(nil), c.all.ws...)
	for _, l := range c.byNS {
		ws = append(ws, l.ws...)
	}
	for _, w := range ws {
		fn(w)
	}
}

// dispatchLocked delivers e to the live watchers it concerns. A watcher
// whose channel is full is waited for within the event's budget
// (Config.SlowWatcherWait, shared by all its watchers), then ended with an
// ERROR frame. c.wmu is held.
func (c *Cache) dispatchLocked(e *event) {
	budget := c.cfg.SlowWatcherWait
	n := c.dispatchList(&c.all, e, &budget)
	if e.cur.namespace != "" {
		if l := c.byNS[e.cur.namespace]; l != nil {
			n += c.dispatchList(l, e, &budget)
		}
	}
	if n > 0 {
		c.metrics.dispatched.Add(n)
	}
}

func (c *Cache) dispatchList(l *watcherList, e *event, budget *time.Duration) uint64 {
	var n uint64
	for i := 0; i < len(l.ws); {
		w := l.ws[i]
		f, ok := w.f.frameFor(e, c)
		if !ok {
			i++
			continue
		}
		if len(w.out) < w.limit || waitForRoom(w, budget) {
			// Cannot block: the dispatcher (holding c.wmu) is the only
			// sender to a live watcher and out has room.
			w.out <- f
			n++
			i++
		} else {
			// endLiveLocked moves the last watcher into slot i: do not
			// advance i.
			c.endTooSlowLocked(w, e.rev)
		}
	}
	return n
}

// waitForRoom polls until w's channel has room for an event frame or the
// budget is spent, and takes the time waited from the budget. Only the
// dispatcher (holding c.wmu) sends to a live watcher, so room, once seen,
// stays until it sends.
func waitForRoom(w *Watcher, budget *time.Duration) bool {
	const poll = 500 * time.Microsecond
	for *budget > 0 {
		start := time.Now()
		time.Sleep(poll)
		*budget -= time.Since(start)
		if len(w.out) < w.limit {
			return true
		}
	}
	return false
}

func (c *Cache) endTooSlowLocked(w *Watcher, rev int64) {
	c.metrics.tooSlow.Add(1)
	c.cfg.Logger.Warn("watch cache ends a watcher that fell behind",
		"namespace", w.f.namespace, "buffer", w.limit, "revision", rev)
	st := expiredStatus(fmt.Sprintf(
		"watch ended: the client fell behind by more than %d events at resource version %d; list again",
		w.limit, rev))
	c.endLiveLocked(w, &st, ErrWatcherTooSlow)
}
