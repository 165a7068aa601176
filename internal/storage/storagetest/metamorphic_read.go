package storagetest

import (
	"errors"
	"fmt"
	"slices"

	"github.com/setpoint-dev/setpoint/internal/storage"
)

// pickRevision chooses a revision to read or watch at: 0 (current) with
// weight 3, one below the compacted revision (want ErrCompacted), one above
// the current (want ErrFutureRevision), else one in [compacted, current].
func (r *metaRunner) pickRevision() (rev int64, want error) {
	m := &r.m
	switch n := r.rng.IntN(10); {
	case n < 3:
		return 0, nil
	case n == 3 && m.compacted > 1:
		return 1 + r.rng.Int64N(m.compacted-1), storage.ErrCompacted
	case n == 4:
		return m.rev + 1 + r.rng.Int64N(2), storage.ErrFutureRevision
	case m.rev == 0:
		return 0, nil
	default:
		lo := max(m.compacted, 1)
		return lo + r.rng.Int64N(m.rev-lo+1), nil
	}
}

func (r *metaRunner) list() {
	prefix, limit := r.prefix(), r.rng.IntN(5)
	rev, wantErr := r.pickRevision()
	r.outcome("list", wantErr)
	r.listAndCheck(prefix, rev, limit, wantErr)
}

// listAndCheck reads every page of prefix at rev and compares with the
// model.
func (r *metaRunner) listAndCheck(prefix string, rev int64, limit int, wantErr error) {
	t := r.t
	t.Helper()
	at := rev
	if at == 0 {
		at = r.m.rev
	}
	want := sortedKVs(r.m.stateAt(at), prefix)
	var got []storage.KeyValue
	opts := storage.ListOptions{Revision: rev, Limit: limit, CountRemaining: true}
	for page := 0; ; page++ {
		res, err := r.s.List(t.Context(), prefix, opts)
		r.logf("list %q %+v -> %d keys more=%v rev=%d, %v", prefix, opts, len(res.KVs), res.More, res.Revision, err)
		if wantErr != nil || err != nil {
			if !errors.Is(err, wantErr) {
				t.Fatalf("list %q %+v: error %v, want %v", prefix, opts, err, wantErr)
			}
			return
		}
		if res.Revision != at {
			t.Fatalf("list %q %+v read at %d, want %d", prefix, opts, res.Revision, at)
		}
		if (limit > 0 && len(res.KVs) > limit) || (page > 0 && len(res.KVs) == 0) || page > len(metaKeys) {
			t.Fatalf("list %q %+v: page %d of %d keys (More on the previous page)", prefix, opts, page, len(res.KVs))
		}
		got = append(got, res.KVs...)
		if left := int64(len(want) - len(got)); (res.More && res.Remaining != left) || (!res.More && res.Remaining != 0) {
			t.Fatalf("list %q %+v: More=%v Remaining=%d, want %d keys after the page", prefix, opts, res.More, res.Remaining, left)
		}
		if !res.More {
			break
		}
		if limit == 0 {
			t.Fatalf("list %q without limit says More", prefix)
		}
		opts.Revision = res.Revision
		opts.StartKey = res.KVs[len(res.KVs)-1].Key + "\x00"
	}
	expectKVs(t, fmt.Sprintf("list %q at %d limit %d", prefix, at, limit), got, want)
}

func (r *metaRunner) compact() {
	m := &r.m
	rev := m.compacted + r.rng.Int64N(m.rev-m.compacted+1)
	var want error
	if r.rng.IntN(8) == 0 {
		rev, want = m.rev+1, storage.ErrFutureRevision
	}
	err := r.s.Compact(r.t.Context(), rev)
	r.logf("compact %d -> %v", rev, err)
	r.outcome("compact", want)
	if !errors.Is(err, want) {
		r.t.Fatalf("compact %d: error %v, want %v", rev, err, want)
	}
	if want == nil {
		m.compacted = max(m.compacted, rev)
	}
	if comp, err := r.s.CompactedRevision(r.t.Context()); err != nil || comp != m.compacted {
		r.t.Fatalf("CompactedRevision = %d, %v; want %d", comp, err, m.compacted)
	}
}

func (r *metaRunner) openWatch() {
	if len(r.watches) >= maxMetaWatches {
		return
	}
	prefix := r.prefix()
	after, wantErr := r.pickRevision()
	w, err := r.s.Watch(r.t.Context(), prefix, after)
	r.logf("watch %q after %d -> %v", prefix, after, err)
	r.outcome("watch", wantErr)
	if !errors.Is(err, wantErr) {
		r.t.Fatalf("watch %q after %d: error %v, want %v", prefix, after, err, wantErr)
	}
	if err != nil {
		return
	}
	r.t.Cleanup(w.Stop)
	seen := after
	if after == 0 {
		seen = r.m.rev
	}
	mw := &metaWatch{w: w, prefix: prefix, seen: seen}
	r.watches = append(r.watches, mw)
	// Drain at once, so that the watch is synced before any compaction.
	r.checkWatch(mw)
}

// checkWatch reads the watch up to a requested progress notification and
// compares what arrived with the model's events since the last check.
func (r *metaRunner) checkWatch(mw *metaWatch) {
	t := r.t
	t.Helper()
	want := r.m.eventsAfter(mw.prefix, mw.seen)
	mw.w.RequestProgress()
	var got []storage.Event
	for {
		resp, ok := <-mw.w.Responses()
		if !ok {
			t.Fatalf("watch %q ended: %v", mw.prefix, mw.w.Err())
		}
		checkResponse(t, resp)
		if len(resp.Events) == 0 {
			if resp.Revision != r.m.rev {
				t.Fatalf("watch %q: progress at %d, want %d", mw.prefix, resp.Revision, r.m.rev)
			}
			break
		}
		got = append(got, resp.Events...)
	}
	r.logf("check watch %q after %d: %d events", mw.prefix, mw.seen, len(got))
	expectEvents(t, got, want)
	mw.seen = r.m.rev
}

func (r *metaRunner) checkRandomWatch() {
	if len(r.watches) > 0 {
		r.checkWatch(r.watches[r.rng.IntN(len(r.watches))])
	}
}

func (r *metaRunner) stopWatch() {
	if len(r.watches) == 0 {
		return
	}
	i := r.rng.IntN(len(r.watches))
	mw := r.watches[i]
	r.logf("stop watch %q", mw.prefix)
	mw.w.Stop()
	expectEnd(r.t, mw.w, nil)
	r.watches = slices.Delete(r.watches, i, i+1)
}

func (r *metaRunner) count() {
	prefix := r.prefix()
	want := int64(len(sortedKVs(r.m.stateAt(r.m.rev), prefix)))
	n, err := r.s.Count(r.t.Context(), prefix)
	r.logf("count %q -> %d, %v", prefix, n, err)
	if err != nil || n != want {
		r.t.Fatalf("count %q = %d, %v; want %d", prefix, n, err, want)
	}
}

// checkAll compares the whole readable history and a fresh watch over it
// with the model.
func (r *metaRunner) checkAll() {
	t, m := r.t, &r.m
	if cur := mustRevision(t, r.s); cur != m.rev {
		t.Fatalf("CurrentRevision = %d, want %d", cur, m.rev)
	}
	for rev := max(m.compacted, 1); rev <= m.rev; rev++ {
		r.listAndCheck("", rev, 0, nil)
	}
	if m.compacted > 1 {
		r.listAndCheck("", m.compacted-1, 0, storage.ErrCompacted)
	}
	st, err := r.s.Stats(t.Context())
	if want := int64(len(m.stateAt(m.rev))); err != nil || st.Keys != want {
		t.Fatalf("Stats = %+v, %v; want %d keys", st, err, want)
	}
	if m.rev > 1 {
		w := mustWatch(t, r.s, "", max(m.compacted, 1))
		r.checkWatch(&metaWatch{w: w, seen: max(m.compacted, 1)})
	}
}
