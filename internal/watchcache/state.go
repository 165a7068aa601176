package watchcache

import (
	"fmt"
	"sort"
	"strings"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/setpoint-dev/setpoint/internal/storage"
)

// object is one decoded state of one key. It is immutable once built and
// shared by the current-state tree, the window's events and the frames built
// from it.
type object struct {
	key string
	// namespace is taken from the key ("" for cluster-scoped kinds).
	namespace string
	obj       runtime.Object
	labels    labels.Set
	fields    fields.Set
	// rev is the object's resourceVersion: its ModRevision, or for the
	// state carried by a delete event the deletion revision.
	rev       int64
	createRev int64
	// frames holds the lazily created shared frames of this state, indexed
	// by frameSlot. Set once (CompareAndSwap from nil), never reset.
	frames [3]atomic.Pointer[lazyFrame]
}

func lessObject(a, b *object) bool { return a.key < b.key }

// frameSlot maps the event types of object frames to frames indices.
func frameSlot(t watch.EventType) int {
	switch t {
	case watch.Added:
		return 0
	case watch.Modified:
		return 1
	case watch.Deleted:
		return 2
	}
	panic(fmt.Sprintf("watchcache: no shared frame slot for %q", t))
}

// frame returns the shared frame of this state with type t, creating it on
// first need. Safe for concurrent use.
func (o *object) frame(t watch.EventType, c *Cache) Frame {
	slot := &o.frames[frameSlot(t)]
	lf := slot.Load()
	if lf == nil {
		lf = newLazyFrame(t, o.obj, &c.encs)
		if !slot.CompareAndSwap(nil, lf) {
			lf = slot.Load()
		}
	}
	return lf.frame(o.rev)
}

// event is one storage event as the cache saw it. Immutable once built.
type event struct {
	rev int64
	// cur is the new state; for a delete, the deleted value decoded with
	// the deletion revision.
	cur *object
	// prev is the cached state before the event; nil for a create.
	prev    *object
	deleted bool
}

// newObject decodes one stored value.
func (c *Cache) newObject(kv storage.KeyValue) (*object, error) {
	obj, err := c.cfg.Decode(kv)
	if err != nil {
		return nil, fmt.Errorf("decode %q at revision %d: %w", kv.Key, kv.ModRevision, err)
	}
	ls, fs, err := c.cfg.Attrs(obj)
	if err != nil {
		return nil, fmt.Errorf("attributes of %q at revision %d: %w", kv.Key, kv.ModRevision, err)
	}
	return &object{
		key:       kv.Key,
		namespace: c.namespaceOf(kv.Key),
		obj:       obj,
		labels:    ls,
		fields:    fs,
		rev:       kv.ModRevision,
		createRev: kv.CreateRevision,
	}, nil
}

// namespaceOf extracts the namespace segment of a key of a namespaced kind.
func (c *Cache) namespaceOf(key string) string {
	if !c.cfg.Namespaced {
		return ""
	}
	rest := strings.TrimPrefix(key, c.cfg.Prefix)
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		return rest[:i]
	}
	return ""
}

// window is the ring buffer of recent events. Invariant: it holds every
// event with a revision in (after, cache revision], oldest first.
type window struct {
	buf   []*event // len(buf) is the capacity
	start int      // index in buf of the oldest event
	n     int      // number of events held
	// after is the list revision or the revision of the last evicted event.
	after int64
}

func newWindow(capacity int) window {
	return window{buf: make([]*event, capacity)}
}

// at returns the i-th oldest event, 0 <= i < n.
func (w *window) at(i int) *event {
	return w.buf[(w.start+i)%len(w.buf)]
}

// push appends e, evicting the oldest event when full.
func (w *window) push(e *event) {
	if w.n == len(w.buf) {
		w.after = w.buf[w.start].rev
		w.buf[w.start] = nil
		w.start = (w.start + 1) % len(w.buf)
		w.n--
	}
	w.buf[(w.start+w.n)%len(w.buf)] = e
	w.n++
}

// firstAfter returns the index of the oldest event with revision > rev (n
// when there is none).
func (w *window) firstAfter(rev int64) int {
	return sort.Search(w.n, func(i int) bool { return w.at(i).rev > rev })
}

// reset empties the window; it now serves positions >= after.
func (w *window) reset(after int64) {
	clear(w.buf)
	w.start, w.n, w.after = 0, 0, after
}

// filter is a namespace plus selectors. Immutable.
type filter struct {
	// namespace "" admits every namespace.
	namespace string
	label     labels.Selector
	field     fields.Selector
	// everything is true when both selectors admit everything.
	everything bool
}

func newFilter(namespace string, label labels.Selector, field fields.Selector) filter {
	if label == nil {
		label = labels.Everything()
	}
	if field == nil {
		field = fields.Everything()
	}
	return filter{
		namespace:  namespace,
		label:      label,
		field:      field,
		everything: label.Empty() && field.Empty(),
	}
}

// selects reports whether the selectors admit o (the namespace is checked
// by the caller).
func (f *filter) selects(o *object) bool {
	return f.everything || (f.label.Matches(o.labels) && f.field.Matches(o.fields))
}

// frameFor applies the Kubernetes watch filtering rules to e: which frame,
// if any, a watcher with filter f receives.
func (f *filter) frameFor(e *event, c *Cache) (Frame, bool) {
	if f.namespace != "" && e.cur.namespace != f.namespace {
		return Frame{}, false
	}
	cur := f.selects(e.cur)
	if e.deleted {
		if !cur {
			return Frame{}, false
		}
		return e.cur.frame(watch.Deleted, c), true
	}
	if e.prev == nil {
		if !cur {
			return Frame{}, false
		}
		return e.cur.frame(watch.Added, c), true
	}
	prev := f.selects(e.prev)
	switch {
	case prev && cur:
		return e.cur.frame(watch.Modified, c), true
	case cur:
		return e.cur.frame(watch.Added, c), true
	case prev:
		return e.cur.frame(watch.Deleted, c), true
	}
	return Frame{}, false
}
