package informer

import (
	"fmt"
	"strconv"
	"sync"
)

// note is one notification as a journal recorded it.
type note struct {
	// op is add, update, resync (OnUpdate with the same object twice) or
	// delete.
	op      string
	name    string
	rv      uint64
	oldRV   uint64 // update only: the resourceVersion of oldObj
	value   string
	unknown bool // delete only: finalStateUnknown
}

func (n note) String() string {
	s := fmt.Sprintf("%s %s@%d=%q", n.op, n.name, n.rv, n.value)
	if n.op == "update" {
		s += fmt.Sprintf(" (old @%d)", n.oldRV)
	}
	if n.unknown {
		s += " unknown"
	}
	return s
}

// versioned is an object's state as the consistency test compares it.
type versioned struct {
	rv    uint64
	value string
}

// journal is a Handler that records every notification of one handler and
// checks, as each arrives, that it is consistent with the ones before:
//
//   - add: the object is not present for this handler, and its
//     resourceVersion is newer than any the handler saw under that name;
//   - update: the object is present, oldObj is the state last handed to the
//     handler, and newObj is not older (equal only with the same content:
//     a relist that returned the object unchanged);
//   - resync: only for a handler that asked for resyncs, and it repeats
//     exactly the state last handed to it;
//   - delete: the object is present; a finalStateUnknown deletion carries
//     the last state handed to the handler, any other a state not older;
//   - adds marked isInInitialList come before every other notification.
type journal[T Object] struct {
	label string
	// resyncs says whether this handler asked for periodic resyncs.
	resyncs bool
	value   func(T) string

	mu    sync.Mutex
	notes []note
	// present is the state the handler was last handed per name, for the
	// objects it currently believes exist.
	present map[string]versioned
	// newest is the highest resourceVersion handed per name, deletions
	// included: an add must be newer.
	newest map[string]uint64
	// live is set by the first notification that is not an add of the
	// initial list; no initial-list add may follow it.
	live bool
	// problems are the rule violations seen, capped at maxProblems.
	problems []string
}

const maxProblems = 20

func newJournal[T Object](label string, resyncs bool, value func(T) string) *journal[T] {
	return &journal[T]{label: label, resyncs: resyncs, value: value,
		present: map[string]versioned{}, newest: map[string]uint64{}}
}

// rv parses a resourceVersion; setpoint's are decimal revisions.
func rv(obj Object) uint64 {
	n, err := strconv.ParseUint(obj.GetResourceVersion(), 10, 64)
	if err != nil {
		panic(fmt.Sprintf("resourceVersion %q of %s: %v", obj.GetResourceVersion(), obj.GetName(), err))
	}
	return n
}

// problem records a violation; caller holds mu.
func (j *journal[T]) problem(n note, format string, args ...any) {
	if len(j.problems) < maxProblems {
		j.problems = append(j.problems, fmt.Sprintf("%s: notification %d (%v): ", j.label, len(j.notes), n)+fmt.Sprintf(format, args...))
	}
}

// record checks n against the handler's past and appends it; caller holds
// mu.
func (j *journal[T]) record(n note) {
	cur, ok := j.present[n.name]
	switch n.op {
	case "add":
		if ok {
			j.problem(n, "added while present at @%d", cur.rv)
		}
		if last, seen := j.newest[n.name]; seen && n.rv <= last {
			j.problem(n, "added at a version not newer than @%d", last)
		}
	case "update", "resync":
		switch {
		case !ok:
			j.problem(n, "update of an object the handler does not have")
		case n.op == "resync" && !j.resyncs:
			j.problem(n, "resync delivered to a handler without a resync period")
		case n.op == "resync" && n.rv != cur.rv:
			j.problem(n, "resync of @%d, but the handler was last handed @%d", n.rv, cur.rv)
		case n.op == "update" && n.oldRV != cur.rv:
			j.problem(n, "oldObj @%d is not the state last handed (@%d)", n.oldRV, cur.rv)
		case n.rv < cur.rv:
			j.problem(n, "older than the state last handed (@%d)", cur.rv)
		case n.rv == cur.rv && n.value != cur.value:
			j.problem(n, "same version as the state last handed but content %q", cur.value)
		}
	case "delete":
		switch {
		case !ok:
			j.problem(n, "delete of an object the handler does not have")
		case n.unknown && n.rv != cur.rv:
			j.problem(n, "unknown final state @%d is not the state last handed (@%d)", n.rv, cur.rv)
		case n.rv < cur.rv:
			j.problem(n, "final state older than the state last handed (@%d)", cur.rv)
		}
	}
	if n.op == "delete" {
		delete(j.present, n.name)
	} else {
		j.present[n.name] = versioned{rv: n.rv, value: n.value}
	}
	j.newest[n.name] = max(j.newest[n.name], n.rv)
	j.notes = append(j.notes, n)
}

func (j *journal[T]) note(op string, obj T) note {
	return note{op: op, name: obj.GetName(), rv: rv(obj), value: j.value(obj)}
}

// OnAdd implements Handler. The handler was registered before Run, so
// isInInitialList marks exactly the adds of the first list, which come
// before anything else.
func (j *journal[T]) OnAdd(obj T, initial bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	n := j.note("add", obj)
	if initial && j.live {
		j.problem(n, "isInInitialList after later notifications")
	}
	j.live = j.live || !initial
	j.record(n)
}

// OnUpdate implements Handler.
func (j *journal[T]) OnUpdate(oldObj, newObj T) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.live = true
	if any(oldObj) == any(newObj) {
		j.record(j.note("resync", newObj))
		return
	}
	n := j.note("update", newObj)
	n.oldRV = rv(oldObj)
	j.record(n)
}

// OnDelete implements Handler.
func (j *journal[T]) OnDelete(obj T, unknown bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.live = true
	n := j.note("delete", obj)
	n.unknown = unknown
	j.record(n)
}

// state returns what the handler believes exists.
func (j *journal[T]) state() map[string]versioned {
	j.mu.Lock()
	defer j.mu.Unlock()
	out := make(map[string]versioned, len(j.present))
	for k, v := range j.present {
		out[k] = v
	}
	return out
}

// since returns the notifications from position mark on.
func (j *journal[T]) since(mark int) []note {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]note(nil), j.notes[mark:]...)
}

// mark is the number of notifications recorded so far.
func (j *journal[T]) mark() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return len(j.notes)
}

// violations returns the rule violations seen.
func (j *journal[T]) violations() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]string(nil), j.problems...)
}

// withoutResyncs returns every notification except resyncs.
func (j *journal[T]) withoutResyncs() []note {
	j.mu.Lock()
	defer j.mu.Unlock()
	var out []note
	for _, n := range j.notes {
		if n.op != "resync" {
			out = append(out, n)
		}
	}
	return out
}
