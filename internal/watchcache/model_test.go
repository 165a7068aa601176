package watchcache

import (
	"maps"
	"slices"
	"strconv"
	"testing"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"
)

// modelObj is one state of a ConfigMap as the test wrote it.
type modelObj struct {
	ns, name string
	labels   map[string]string
	data     string
	// rev is the resourceVersion the state carries (for the state in a
	// delete event: the deletion revision).
	rev int64
}

func (o *modelObj) key() string { return cmKey(o.ns, o.name) }

func (o *modelObj) fields() fields.Set {
	return fields.Set{"metadata.name": o.name, "metadata.namespace": o.ns, "tier": o.labels["tier"]}
}

// modelEvent is one write under the cached prefix.
type modelEvent struct {
	rev       int64
	cur, prev *modelObj
	deleted   bool
}

// model is the full event log of the prefix, the reference the cache is
// checked against.
type model struct {
	events []modelEvent
	state  map[string]*modelObj
}

func newModel() *model { return &model{state: map[string]*modelObj{}} }

// record appends the event of a write that the store acknowledged at rev.
func (m *model) put(o *modelObj) {
	prev := m.state[o.key()]
	m.events = append(m.events, modelEvent{rev: o.rev, cur: o, prev: prev})
	m.state[o.key()] = o
}

func (m *model) del(key string, rev int64) {
	prev := m.state[key]
	gone := *prev
	gone.rev = rev
	m.events = append(m.events, modelEvent{rev: rev, cur: &gone, prev: prev, deleted: true})
	delete(m.state, key)
}

// stateAt replays the log up to rev.
func (m *model) stateAt(rev int64) map[string]*modelObj {
	st := map[string]*modelObj{}
	for _, e := range m.events {
		if e.rev > rev {
			break
		}
		if e.deleted {
			delete(st, e.cur.key())
		} else {
			st[e.cur.key()] = e.cur
		}
	}
	return st
}

// eventsIn counts the events with a revision in (after, upTo].
func (m *model) eventsIn(after, upTo int64) int {
	n := 0
	for _, e := range m.events {
		if e.rev > after && e.rev <= upTo {
			n++
		}
	}
	return n
}

// modelFilter is the test's own reading of a watch or list filter.
type modelFilter struct {
	ns    string
	label labels.Selector
	field fields.Selector
}

func (f modelFilter) admits(o *modelObj) bool {
	return (f.ns == "" || o.ns == f.ns) &&
		f.label.Matches(labels.Set(o.labels)) && f.field.Matches(o.fields())
}

type expected struct {
	typ watch.EventType
	obj *modelObj
}

// expectedAfter is what a watch from rev must deliver, by the Kubernetes
// rules: a create or an update into the selection is ADDED, an update within
// it MODIFIED, an update out of it or a delete within it DELETED.
func (m *model) expectedAfter(f modelFilter, rev int64) []expected {
	var out []expected
	for _, e := range m.events {
		if e.rev <= rev {
			continue
		}
		cur := f.admits(e.cur)
		prev := e.prev != nil && f.admits(e.prev)
		switch {
		case e.deleted && cur:
			out = append(out, expected{watch.Deleted, e.cur})
		case e.deleted:
		case prev && cur:
			out = append(out, expected{watch.Modified, e.cur})
		case cur:
			out = append(out, expected{watch.Added, e.cur})
		case prev:
			out = append(out, expected{watch.Deleted, e.cur})
		}
	}
	return out
}

// initialAt is the sorted ADDED set of an initial-events watch at rev.
func (m *model) initialAt(f modelFilter, rev int64) []expected {
	st := m.stateAt(rev)
	var out []expected
	for _, k := range slices.Sorted(maps.Keys(st)) {
		if f.admits(st[k]) {
			out = append(out, expected{watch.Added, st[k]})
		}
	}
	return out
}

// checkFrames compares delivered frames with the expectation.
func checkFrames(t *testing.T, what string, got []Frame, want []expected) {
	t.Helper()
	for i := 0; i < max(len(got), len(want)); i++ {
		switch {
		case i >= len(got):
			t.Fatalf("%s: frame %d missing: want %s %s@%d (got %d of %d frames)",
				what, i, want[i].typ, want[i].obj.key(), want[i].obj.rev, len(got), len(want))
		case i >= len(want):
			t.Fatalf("%s: unexpected frame %d: %s", what, i, describe(t, got[i]))
		}
		checkFrame(t, what, i, got[i], want[i])
	}
}

func checkFrame(t *testing.T, what string, i int, f Frame, want expected) {
	t.Helper()
	w := decodeFrame(t, f)
	md := w.Object.Metadata
	ok := f.Type == want.typ && md.Namespace == want.obj.ns && md.Name == want.obj.name &&
		md.ResourceVersion == strconv.FormatInt(want.obj.rev, 10) &&
		maps.Equal(md.Labels, want.obj.labels) && w.Object.Data["v"] == want.obj.data
	if !ok {
		t.Fatalf("%s: frame %d is %s, want %s %s@%d %v", what, i, describe(t, f),
			want.typ, want.obj.key(), want.obj.rev, want.obj.labels)
	}
}
