package storagetest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/setpoint-dev/setpoint/internal/storage"
)

// The metamorphic test (in the spirit of pebble's internal/metamorphic)
// runs a random sequence of operations, derived from a seed, against a
// store and checks every result against the model. Operations run one at
// a time, so each outcome is determined by the model alone.

var (
	metaKeys = []string{
		"m/a/0", "m/a/1", "m/a/2", "m/a/3", "m/a/x/0", "m/a/x/1",
		"m/b/0", "m/b/1", "m/b/2", "n/0",
	}
	metaPrefixes = []string{"", "m/", "m/a/", "m/a/x/", "m/b/", "z/"}
)

const maxMetaWatches = 5

type metaWatch struct {
	w      storage.WatchStream
	prefix string
	seen   int64 // every event up to seen has been received and checked
}

type metaRunner struct {
	t       *testing.T
	s       storage.Store
	m       model
	rng     *rand.Rand
	step    int
	watches []*metaWatch
	trace   []string // recent operations, logged on failure
	// outcomes counts what the operations did, logged at the end so that
	// a change of generator that stops exercising a path shows.
	outcomes map[string]int
}

func runMetamorphic(t *testing.T, newStore func(t *testing.T) storage.Store) {
	seeds, steps := 24, 400
	if testing.Short() {
		seeds, steps = 6, 200
	}
	for seed := range uint64(seeds) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			r := &metaRunner{t: t, s: Open(t, newStore), rng: rand.New(rand.NewPCG(seed, 0x5e7)), outcomes: map[string]int{}}
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("seed %d, last operations:\n%s", seed, fmt.Sprint(r.trace))
				}
			})
			r.run(steps)
		})
	}
}

func (r *metaRunner) logf(format string, args ...any) {
	r.trace = append(r.trace, fmt.Sprintf("%d: ", r.step)+fmt.Sprintf(format, args...)+"\n")
	if len(r.trace) > 40 {
		r.trace = r.trace[1:]
	}
}

func (r *metaRunner) run(steps int) {
	ops := []struct {
		weight int
		fn     func()
	}{
		{25, r.create}, {20, r.update}, {12, r.delete}, {8, r.get}, {15, r.list},
		{4, r.compact}, {5, r.openWatch}, {8, r.checkRandomWatch}, {2, r.stopWatch}, {3, r.count},
	}
	total := 0
	for _, op := range ops {
		total += op.weight
	}
	for r.step = range steps {
		n := r.rng.IntN(total)
		for _, op := range ops {
			if n < op.weight {
				op.fn()
				break
			}
			n -= op.weight
		}
		if r.t.Failed() {
			r.t.FailNow()
		}
	}
	for _, w := range r.watches {
		r.checkWatch(w)
	}
	r.checkAll()
	r.t.Logf("outcomes: %v", r.outcomes)
}

// outcome counts an operation (named by the first word of what) by its
// expected error.
func (r *metaRunner) outcome(what string, err error) {
	op, _, _ := strings.Cut(what, " ")
	switch {
	case errors.Is(err, storage.ErrConflict):
		op += ":conflict"
	case errors.Is(err, storage.ErrNotFound):
		op += ":notfound"
	case errors.Is(err, storage.ErrKeyExists):
		op += ":exists"
	case errors.Is(err, storage.ErrCompacted):
		op += ":compacted"
	case errors.Is(err, storage.ErrFutureRevision):
		op += ":future"
	case err != nil:
		op += ":error"
	}
	r.outcomes[op]++
}

func (r *metaRunner) key() string { return metaKeys[r.rng.IntN(len(metaKeys))] }

func (r *metaRunner) prefix() string { return metaPrefixes[r.rng.IntN(len(metaPrefixes))] }

func (r *metaRunner) value() []byte {
	if r.rng.IntN(10) == 0 {
		return nil
	}
	return fmt.Appendf(nil, "v%d-%d", r.step, r.rng.IntN(1000))
}

// expectedRev picks the revision a CAS write names: usually the right one.
func (r *metaRunner) expectedRev(cur storage.KeyValue, exists, zeroOK bool) int64 {
	switch n := r.rng.IntN(10); {
	case n < 6 && exists:
		return cur.ModRevision
	case n < 8 && zeroOK:
		return 0
	default:
		return cur.ModRevision + 1 + int64(r.rng.IntN(3)) // wrong
	}
}

// checkWrite checks a write's outcome against the model's prediction and
// applies the event of a successful write.
func (r *metaRunner) checkWrite(what string, rev int64, err error, wantErr error, cur storage.KeyValue, ev storage.Event) {
	t := r.t
	t.Helper()
	r.logf("%s -> %d, %v", what, rev, err)
	r.outcome(what, wantErr)
	if wantErr != nil {
		if !errors.Is(err, wantErr) {
			t.Fatalf("%s: got %d, %v; want %v", what, rev, err, wantErr)
		}
		var ce *storage.ConflictError
		if errors.Is(wantErr, storage.ErrConflict) && (!errors.As(err, &ce) || !sameKV(ce.Current, cur)) {
			t.Fatalf("%s: conflict %v does not carry %s", what, err, kvString(cur))
		}
		return
	}
	if err != nil {
		t.Fatalf("%s: unexpected error %v", what, err)
	}
	if rev <= r.m.rev {
		t.Fatalf("%s: revision %d not above %d", what, rev, r.m.rev)
	}
	ev.Revision = rev
	r.m.apply(ev)
}

func (r *metaRunner) create() {
	key, val := r.key(), r.value()
	_, exists := r.m.current(key)
	rev, err := r.s.Create(r.t.Context(), key, val)
	var want error
	if exists {
		want = storage.ErrKeyExists
	}
	r.checkWrite(fmt.Sprintf("create %s=%q", key, val), rev, err, want, storage.KeyValue{},
		storage.Event{Type: storage.EventPut, Key: key, Value: val, Created: true})
}

func (r *metaRunner) update() {
	key, val := r.key(), r.value()
	cur, exists := r.m.current(key)
	exp := r.expectedRev(cur, exists, false)
	rev, err := r.s.Update(r.t.Context(), key, val, exp)
	var want error
	switch {
	case !exists:
		want = storage.ErrNotFound
	case exp != cur.ModRevision:
		want = storage.ErrConflict
	}
	r.checkWrite(fmt.Sprintf("update %s=%q at %d", key, val, exp), rev, err, want, cur,
		storage.Event{Type: storage.EventPut, Key: key, Value: val, PrevValue: cur.Value})
}

func (r *metaRunner) delete() {
	key := r.key()
	cur, exists := r.m.current(key)
	exp := r.expectedRev(cur, exists, true)
	rev, kv, err := r.s.Delete(r.t.Context(), key, exp)
	var want error
	switch {
	case !exists:
		want = storage.ErrNotFound
	case exp != 0 && exp != cur.ModRevision:
		want = storage.ErrConflict
	}
	r.checkWrite(fmt.Sprintf("delete %s at %d", key, exp), rev, err, want, cur,
		storage.Event{Type: storage.EventDelete, Key: key, PrevValue: cur.Value})
	if want == nil && !sameKV(kv, cur) {
		r.t.Fatalf("delete %s returned %s, want %s", key, kvString(kv), kvString(cur))
	}
}

func (r *metaRunner) get() {
	key := r.key()
	cur, exists := r.m.current(key)
	kv, err := r.s.Get(r.t.Context(), key)
	r.logf("get %s -> %s, %v", key, kvString(kv), err)
	switch {
	case !exists && !errors.Is(err, storage.ErrNotFound):
		r.t.Fatalf("get %s: got %s, %v; want ErrNotFound", key, kvString(kv), err)
	case exists && (err != nil || !sameKV(kv, cur)):
		r.t.Fatalf("get %s: got %s, %v; want %s", key, kvString(kv), err, kvString(cur))
	}
}
