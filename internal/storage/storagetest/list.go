package storagetest

import (
	"errors"
	"fmt"
	"testing"

	"github.com/setpoint-dev/setpoint/internal/storage"
)

func listCases() []testCase {
	return []testCase{
		{"ListPrefix", testListPrefix},
		{"ListPagination", testListPagination},
		{"ListRemaining", testListRemaining},
		{"ListHistory", testListHistory},
		{"ListFutureRevision", testListFutureRevision},
		{"Compaction", testCompaction},
	}
}

func testListPrefix(t *testing.T, s storage.Store) {
	var want []storage.KeyValue
	for _, k := range []string{"a/2", "b/1", "a/1", "ab/1", "a/1/x"} {
		rev := mustCreate(t, s, k, "v:"+k)
		if k[:2] == "a/" {
			want = append(want, storage.KeyValue{Key: k, Value: []byte("v:" + k), CreateRevision: rev, ModRevision: rev})
		}
	}
	// Sorted: a/1, a/1/x, a/2.
	want[0], want[1], want[2] = want[1], want[2], want[0]
	res := mustList(t, s, "a/", storage.ListOptions{})
	expectKVs(t, `List("a/")`, res.KVs, want)
	if res.More || res.Revision != mustRevision(t, s) {
		t.Fatalf("List: More=%v Revision=%d", res.More, res.Revision)
	}
	if res := mustList(t, s, "", storage.ListOptions{}); len(res.KVs) != 5 {
		t.Fatalf("List of everything returned %d keys", len(res.KVs))
	}
	if res := mustList(t, s, "c/", storage.ListOptions{}); len(res.KVs) != 0 || res.More {
		t.Fatalf("List of an empty prefix = %+v", res)
	}
	// A StartKey before the prefix starts at the prefix; after it, nothing.
	expectKVs(t, "StartKey before prefix", mustList(t, s, "a/", storage.ListOptions{StartKey: "a"}).KVs, want)
	if res := mustList(t, s, "a/", storage.ListOptions{StartKey: "b"}); len(res.KVs) != 0 {
		t.Fatalf("StartKey after the prefix listed %v", kvStrings(res.KVs))
	}
	expectKVs(t, "StartKey inside", mustList(t, s, "a/", storage.ListOptions{StartKey: "a/1\x00"}).KVs, want[1:])
}

func testListPagination(t *testing.T, s storage.Store) {
	const n = 25
	var want []storage.KeyValue
	for i := range n {
		k := fmt.Sprintf("p/%03d", i)
		rev := mustCreate(t, s, k, k)
		want = append(want, storage.KeyValue{Key: k, Value: []byte(k), CreateRevision: rev, ModRevision: rev})
	}
	first := mustList(t, s, "p/", storage.ListOptions{Limit: 10})
	snapshot := first.Revision
	// Writes after the first page must not show in the next pages.
	mustDelete(t, s, "p/015", 0)
	mustCreate(t, s, "p/0155", "new")
	mustUpdate(t, s, "p/020", "changed", want[20].ModRevision)

	var got []storage.KeyValue
	res := first
	for page := 0; ; page++ {
		if page > n {
			t.Fatal("pagination does not end")
		}
		if res.Revision != snapshot {
			t.Fatalf("page %d read at %d, want %d", page, res.Revision, snapshot)
		}
		if len(res.KVs) > 10 {
			t.Fatalf("page %d has %d keys, limit 10", page, len(res.KVs))
		}
		got = append(got, res.KVs...)
		if !res.More {
			break
		}
		last := res.KVs[len(res.KVs)-1].Key
		res = mustList(t, s, "p/", storage.ListOptions{Revision: snapshot, StartKey: last + "\x00", Limit: 10})
	}
	expectKVs(t, "paginated list", got, want)
	exact := mustList(t, s, "p/", storage.ListOptions{Revision: snapshot, Limit: n})
	if exact.More || len(exact.KVs) != n {
		t.Fatalf("Limit equal to the key count: %d keys, More=%v", len(exact.KVs), exact.More)
	}
}

// testListRemaining checks that a page with More counts the keys after it
// at the page's revision (none deleted before it, none created after it),
// and that a last page counts none.
func testListRemaining(t *testing.T, s storage.Store) {
	for i := range 10 {
		mustCreate(t, s, fmt.Sprintf("r/%d", i), "v")
	}
	mustCreate(t, s, "r0", "sibling") // outside the prefix "r/"
	old, _ := mustDelete(t, s, "r/7", 0)
	// At old: r/0..r/6, r/8, r/9.
	mustCreate(t, s, "r/55", "new")
	mustDelete(t, s, "r/8", 0)
	r3 := mustGet(t, s, "r/3")
	mustUpdate(t, s, "r/3", "changed", r3.ModRevision)
	// Now: r/0..r/5, r/55, r/6, r/9.
	for _, c := range []struct {
		name  string
		opts  storage.ListOptions
		keys  int
		after int64
	}{
		{"current, first page", storage.ListOptions{Limit: 3}, 3, 6},
		{"current, continued", storage.ListOptions{StartKey: "r/3\x00", Limit: 2}, 2, 3},
		{"current, last page", storage.ListOptions{StartKey: "r/5\x00", Limit: 4}, 3, 0},
		{"current, exact fit", storage.ListOptions{StartKey: "r/5\x00", Limit: 3}, 3, 0},
		{"old, first page", storage.ListOptions{Revision: old, Limit: 4}, 4, 5},
		{"old, continued", storage.ListOptions{Revision: old, StartKey: "r/5\x00", Limit: 1}, 1, 2},
		{"old, last page", storage.ListOptions{Revision: old, StartKey: "r/6\x00", Limit: 2}, 2, 0},
	} {
		c.opts.CountRemaining = true
		res := mustList(t, s, "r/", c.opts)
		if len(res.KVs) != c.keys || res.More != (c.after > 0) || res.Remaining != c.after {
			t.Fatalf("%s: %d keys, More=%v, Remaining=%d; want %d keys and %d remaining",
				c.name, len(res.KVs), res.More, res.Remaining, c.keys, c.after)
		}
	}
}

func testListHistory(t *testing.T, s storage.Store) {
	type step struct {
		rev  int64
		want []storage.KeyValue
	}
	var steps []step
	state := map[string]storage.KeyValue{}
	record := func(rev int64) {
		steps = append(steps, step{rev: rev, want: sortedKVs(state, "")})
	}
	r := mustCreate(t, s, "h/a", "a1")
	state["h/a"] = storage.KeyValue{Key: "h/a", Value: []byte("a1"), CreateRevision: r, ModRevision: r}
	record(r)
	rb := mustCreate(t, s, "h/b", "b1")
	state["h/b"] = storage.KeyValue{Key: "h/b", Value: []byte("b1"), CreateRevision: rb, ModRevision: rb}
	record(rb)
	r = mustUpdate(t, s, "h/a", "a2", r)
	state["h/a"] = storage.KeyValue{Key: "h/a", Value: []byte("a2"), CreateRevision: state["h/a"].CreateRevision, ModRevision: r}
	record(r)
	r, _ = mustDelete(t, s, "h/b", 0)
	delete(state, "h/b")
	record(r)
	r = mustCreate(t, s, "h/b", "b2")
	state["h/b"] = storage.KeyValue{Key: "h/b", Value: []byte("b2"), CreateRevision: r, ModRevision: r}
	record(r)
	for _, st := range steps {
		res := mustList(t, s, "h/", storage.ListOptions{Revision: st.rev})
		if res.Revision != st.rev {
			t.Fatalf("List at %d reports revision %d", st.rev, res.Revision)
		}
		expectKVs(t, fmt.Sprintf("List at %d", st.rev), res.KVs, st.want)
	}
	// Pagination at a past revision.
	res := mustList(t, s, "h/", storage.ListOptions{Revision: steps[2].rev, Limit: 1})
	if len(res.KVs) != 1 || !res.More || res.KVs[0].Key != "h/a" {
		t.Fatalf("first page at %d = %v More=%v", steps[2].rev, kvStrings(res.KVs), res.More)
	}
	// After the deletion only h/a exists: a page of one has nothing more.
	res = mustList(t, s, "h/", storage.ListOptions{Revision: steps[3].rev, Limit: 1})
	if len(res.KVs) != 1 || res.More {
		t.Fatalf("page at %d = %v More=%v, want h/a only", steps[3].rev, kvStrings(res.KVs), res.More)
	}
}

func testListFutureRevision(t *testing.T, s storage.Store) {
	rev := mustCreate(t, s, "k", "v")
	_, err := s.List(t.Context(), "", storage.ListOptions{Revision: rev + 1})
	expectErr(t, "List above the current revision", err, storage.ErrFutureRevision)
	var fe *storage.FutureRevisionError
	if !errors.As(err, &fe) || fe.Requested != rev+1 || fe.Current != rev {
		t.Fatalf("error %#v does not say requested %d, current %d", err, rev+1, rev)
	}
	_, err = s.Watch(t.Context(), "", rev+1)
	expectErr(t, "Watch above the current revision", err, storage.ErrFutureRevision)
	expectErr(t, "Compact above the current revision", s.Compact(t.Context(), rev+1), storage.ErrFutureRevision)
}

func testCompaction(t *testing.T, s storage.Store) {
	r1 := mustCreate(t, s, "c/a", "a1")
	r2 := mustCreate(t, s, "c/b", "b1")
	r3 := mustUpdate(t, s, "c/a", "a2", r1)
	r4, _ := mustDelete(t, s, "c/b", r2)
	r5 := mustCreate(t, s, "c/c", "c1")
	r6 := mustUpdate(t, s, "c/a", "a3", r3)
	before := mustList(t, s, "c/", storage.ListOptions{Revision: r5})

	if err := s.Compact(t.Context(), r5); err != nil {
		t.Fatalf("Compact(%d): %v", r5, err)
	}
	if comp, err := s.CompactedRevision(t.Context()); err != nil || comp != r5 {
		t.Fatalf("CompactedRevision = %d, %v; want %d", comp, err, r5)
	}
	for _, rev := range []int64{r1, r4, r5 - 1} {
		_, err := s.List(t.Context(), "c/", storage.ListOptions{Revision: rev})
		expectErr(t, fmt.Sprintf("List at compacted %d", rev), err, storage.ErrCompacted)
		var ce *storage.CompactedError
		if !errors.As(err, &ce) || ce.Compacted != r5 {
			t.Fatalf("error %#v does not name the compacted revision %d", err, r5)
		}
	}
	expectKVs(t, "List at the compacted revision", mustList(t, s, "c/", storage.ListOptions{Revision: r5}).KVs, before.KVs)
	cur := mustList(t, s, "c/", storage.ListOptions{})
	if len(cur.KVs) != 2 || cur.KVs[0].ModRevision != r6 || cur.KVs[0].CreateRevision != r1 {
		t.Fatalf("current state after compaction: %v", kvStrings(cur.KVs))
	}
	_, err := s.Get(t.Context(), "c/b")
	expectErr(t, "Get of a key deleted before compaction", err, storage.ErrNotFound)

	_, err = s.Watch(t.Context(), "c/", r5-1)
	expectErr(t, "Watch from a compacted revision", err, storage.ErrCompacted)
	w := mustWatch(t, s, "c/", r5)
	got := recvAll(t, s, w)
	expectEvents(t, got, []storage.Event{{Type: storage.EventPut, Key: "c/a", Value: []byte("a3"), Revision: r6}})
	expectQuiet(t, s, w)

	// Compacting at or below the compacted revision is a no-op.
	if err := s.Compact(t.Context(), r3); err != nil {
		t.Fatalf("Compact below the compacted revision: %v", err)
	}
	if err := s.Compact(t.Context(), r5); err != nil {
		t.Fatalf("Compact at the compacted revision: %v", err)
	}
	// Compacting everything keeps the current state, and the key deleted
	// before stays deleted; a deleted key can be created again.
	if err := s.Compact(t.Context(), r6); err != nil {
		t.Fatalf("Compact(%d): %v", r6, err)
	}
	expectKVs(t, "List after full compaction", mustList(t, s, "c/", storage.ListOptions{}).KVs, cur.KVs)
	r7 := mustCreate(t, s, "c/b", "b2")
	if kv := mustGet(t, s, "c/b"); kv.CreateRevision != r7 {
		t.Fatalf("recreated key after compaction: %s", kvString(kv))
	}
	mustUpdate(t, s, "c/a", "a4", r6)
}
