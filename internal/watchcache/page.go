package watchcache

import (
	"k8s.io/apimachinery/pkg/runtime"
)

// PageOptions select one page of a List.
type PageOptions struct {
	ListOptions
	// StartKey is the first storage key the page may hold (inclusive); ""
	// starts at the beginning of the namespace (or of the prefix).
	StartKey string
	// Limit is the most items the page holds; 0 is no limit.
	Limit int
	// Revision, when > 0, asks for the objects as they were at that
	// revision. The cache keeps only the current state, so it serves such a
	// page only while nothing under the prefix changed after Revision and
	// the cache is current to it; otherwise Page reports ok false and the
	// caller reads storage.
	Revision int64
}

// Page is one page of a List.
type Page struct {
	// Items are the selected objects, sorted by key; shared with the cache
	// (do not mutate). Entries are the same objects as Items.
	Items   []runtime.Object
	Entries []Item
	// Revision is the revision the page is current to: PageOptions.Revision
	// when set, else the cache revision.
	Revision int64
	// More is true when selected objects follow the page; LastKey is then
	// the key of its last item.
	More    bool
	LastKey string
	// Remaining is, when More and no selector is set, the number of objects
	// after the page in the namespace (or prefix).
	Remaining int64
}

// Page returns one page of the current objects that opts selects, in key
// order, from StartKey on. ok is false when opts.Revision is set and the
// cache cannot serve the state at that revision (see PageOptions).
// Fails with ErrNotReady or ErrStopped.
func (c *Cache) Page(opts PageOptions) (page Page, ok bool, err error) {
	ns := opts.Namespace
	if !c.cfg.Namespaced {
		ns = ""
	}
	f := newFilter(ns, opts.Label, opts.Field)
	c.mu.RLock()
	defer c.mu.RUnlock()
	if err := c.readableLocked(); err != nil {
		return Page{}, false, err
	}
	page.Revision = c.rev.Load()
	if opts.Revision > 0 {
		if opts.Revision > page.Revision || c.lastChangeLocked() > opts.Revision {
			return Page{}, false, nil
		}
		page.Revision = opts.Revision
	}
	full := opts.Limit > 0
	c.ascendFromLocked(f.namespace, opts.StartKey, func(o *object) bool {
		if page.More {
			page.Remaining++
			return true
		}
		if !f.selects(o) {
			return true
		}
		if full && len(page.Items) == opts.Limit {
			page.More = true
			page.Remaining = 1
			return f.everything // the count is only given without selectors
		}
		page.Items = append(page.Items, o.obj)
		page.Entries = append(page.Entries, Item{o: o, c: c})
		page.LastKey = o.key
		return true
	})
	if !page.More {
		page.LastKey = ""
	}
	return page, true, nil
}

// lastChangeLocked returns a revision at or after the last change under
// the prefix: the newest event in the window, or the window's start (the
// list revision or the last evicted event) when it is empty. c.mu is held.
func (c *Cache) lastChangeLocked() int64 {
	if c.win.n > 0 {
		return c.win.at(c.win.n - 1).rev
	}
	return c.win.after
}

// ascendFromLocked visits the current objects of one namespace ("" = all)
// with keys >= start, in key order. c.mu is held.
func (c *Cache) ascendFromLocked(namespace, start string, visit func(*object) bool) {
	if start == "" {
		c.ascendLocked(namespace, visit)
		return
	}
	if namespace == "" {
		c.objects.AscendGreaterOrEqual(&object{key: start}, visit)
		return
	}
	to := c.cfg.Prefix + namespace + "0" // '0' is the byte after '/'
	c.objects.AscendRange(&object{key: start}, &object{key: to}, visit)
}
