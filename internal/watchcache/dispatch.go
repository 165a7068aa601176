package watchcache

import (
	"fmt"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// watcherList is an unordered set of live watchers; a watcher's slot is its
// index. A list kept in a map (owner, under key) is removed from it when it
// becomes empty. Guarded by Cache.wmu.
type watcherList struct {
	ws    []*Watcher
	owner map[string]*watcherList
	key   string
}

func (l *watcherList) add(w *Watcher) {
	w.list, w.slot = l, len(l.ws)
	l.ws = append(l.ws, w)
}

// remove swaps the last watcher into w's slot, and drops the list from its
// owner when it becomes empty.
func (l *watcherList) remove(w *Watcher) {
	last := len(l.ws) - 1
	moved := l.ws[last]
	l.ws[w.slot], moved.slot = moved, w.slot
	l.ws[last] = nil
	l.ws = l.ws[:last]
	w.list = nil
	if len(l.ws) == 0 && l.owner != nil {
		delete(l.owner, l.key)
	}
}

// listIn returns the list of m under key, creating it.
func listIn(m map[string]*watcherList, key string) *watcherList {
	l := m[key]
	if l == nil {
		l = &watcherList{owner: m, key: key}
		m[key] = l
	}
	return l
}

// fieldIndex keeps the live watchers whose field selector requires one
// exact value of field (a trigger field, e.g. spec.nodeName=NODE), by that
// value: an event can concern such a watcher only if the new or the old
// object has that value, so dispatch visits only those two lists.
type fieldIndex struct {
	field   string
	byValue map[string]*watcherList
}

// newFieldIndexes builds the indexes of the trigger fields: metadata.name
// (every kind has it, and it is the most selective) then the kind's own, in
// order, without repeats.
func newFieldIndexes(extra []string) []fieldIndex {
	names := append([]string{"metadata.name"}, extra...)
	var idx []fieldIndex
	for _, f := range names {
		if !slices.ContainsFunc(idx, func(i fieldIndex) bool { return i.field == f }) {
			idx = append(idx, fieldIndex{field: f, byValue: make(map[string]*watcherList)})
		}
	}
	return idx
}

// listFor returns the list a new live watcher joins: the index of the
// first trigger field its field selector requires exactly, else the list
// of its namespace, else the all-namespace list. c.wmu is held.
func (c *Cache) listFor(f *filter) *watcherList {
	if !f.everything {
		for i := range c.indexes {
			idx := &c.indexes[i]
			if v, ok := f.field.RequiresExactMatch(idx.field); ok {
				return listIn(idx.byValue, v)
			}
		}
	}
	if f.namespace != "" {
		return listIn(c.byNS, f.namespace)
	}
	return &c.all
}

// registerLocked makes w live: from now on the cache dispatches into its
// queue. c.wmu is held.
func (c *Cache) registerLocked(w *Watcher) {
	w.state = live
	c.listFor(&w.f).add(w)
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
	w.list.remove(w)
	w.closeLocked(status, err)
}

// eachListLocked calls fn for every list of live watchers. fn must not
// add or remove watchers. c.wmu is held.
func (c *Cache) eachListLocked(fn func(l *watcherList)) {
	fn(&c.all)
	for _, l := range c.byNS {
		fn(l)
	}
	for i := range c.indexes {
		for _, l := range c.indexes[i].byValue {
			fn(l)
		}
	}
}

// forEachLiveLocked calls fn for every live watcher; fn may end it.
// c.wmu is held.
func (c *Cache) forEachLiveLocked(fn func(w *Watcher)) {
	var ws []*Watcher
	c.eachListLocked(func(l *watcherList) { ws = append(ws, l.ws...) })
	for _, w := range ws {
		fn(w)
	}
}

// dispatchLocked delivers e to the live watchers it concerns. A watcher
// with its limit of frames waiting is waited for within the event's budget
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
	for i := range c.indexes {
		idx := &c.indexes[i]
		if len(idx.byValue) == 0 {
			continue
		}
		v := e.cur.fields[idx.field]
		if l := idx.byValue[v]; l != nil {
			n += c.dispatchList(l, e, &budget)
		}
		// An update that changed the value concerns the watchers of the
		// old value too (the object left their selection: DELETED).
		if e.prev != nil {
			if pv := e.prev.fields[idx.field]; pv != v {
				if l := idx.byValue[pv]; l != nil {
					n += c.dispatchList(l, e, &budget)
				}
			}
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
		if w.q.pushWithin(f, w.limit) || c.waitForRoom(w, budget) && w.q.pushWithin(f, w.limit) {
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

// waitForRoom polls until w's queue has room for an event frame or the
// budget is spent, and takes the time waited, on the cache's clock, from
// the budget. Only the dispatcher (holding c.wmu) sends to a live watcher,
// so room, once seen, stays until it sends.
func (c *Cache) waitForRoom(w *Watcher, budget *time.Duration) bool {
	const poll = 500 * time.Microsecond
	for *budget > 0 {
		start := c.clock.Now()
		c.clock.Sleep(min(poll, *budget))
		*budget -= c.clock.Since(start)
		if w.q.len() < w.limit {
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
