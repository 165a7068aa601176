package storagetest

import (
	"errors"
	"testing"

	"github.com/setpoint-dev/setpoint/internal/storage"
)

func crudCases() []testCase {
	return []testCase{
		{"EmptyStore", testEmptyStore},
		{"CreateGet", testCreateGet},
		{"UpdateCAS", testUpdateCAS},
		{"DeleteCAS", testDeleteCAS},
		{"ValuesAreCopied", testValuesAreCopied},
		{"CountAndStats", testCountAndStats},
		{"Closed", testClosed},
	}
}

func testEmptyStore(t *testing.T, s storage.Store) {
	if rev := mustRevision(t, s); rev != 0 {
		t.Fatalf("empty store at revision %d", rev)
	}
	res := mustList(t, s, "", storage.ListOptions{})
	if len(res.KVs) != 0 || res.More || res.Revision != 0 {
		t.Fatalf("empty store lists %+v", res)
	}
	_, err := s.Get(t.Context(), "a/b")
	expectErr(t, "Get on an empty store", err, storage.ErrNotFound)
	comp, err := s.CompactedRevision(t.Context())
	if err != nil || comp != 0 {
		t.Fatalf("CompactedRevision = %d, %v; want 0", comp, err)
	}
}

func testCreateGet(t *testing.T, s storage.Store) {
	r1 := mustCreate(t, s, "pods/default/a", "one")
	if r1 <= 0 {
		t.Fatalf("first revision %d", r1)
	}
	kv := mustGet(t, s, "pods/default/a")
	want := storage.KeyValue{Key: "pods/default/a", Value: []byte("one"), CreateRevision: r1, ModRevision: r1}
	if !sameKV(kv, want) {
		t.Fatalf("Get = %s, want %s", kvString(kv), kvString(want))
	}
	_, err := s.Create(t.Context(), "pods/default/a", []byte("two"))
	expectErr(t, "second Create", err, storage.ErrKeyExists)
	if cur := mustRevision(t, s); cur != r1 {
		t.Fatalf("failed Create moved the revision to %d", cur)
	}
	r2 := mustCreate(t, s, "pods/default/b", "")
	if r2 <= r1 {
		t.Fatalf("revision %d after %d", r2, r1)
	}
	if kv := mustGet(t, s, "pods/default/b"); len(kv.Value) != 0 || kv.ModRevision != r2 {
		t.Fatalf("empty value read back as %s", kvString(kv))
	}
	r3, err := s.Create(t.Context(), "pods/default/c", nil)
	if err != nil || r3 <= r2 {
		t.Fatalf("Create with nil value = %d, %v", r3, err)
	}
	_, err = s.Get(t.Context(), "pods/default")
	expectErr(t, "Get of a prefix", err, storage.ErrNotFound)
	if cur := mustRevision(t, s); cur != r3 {
		t.Fatalf("CurrentRevision = %d, want %d", cur, r3)
	}
}

func testUpdateCAS(t *testing.T, s storage.Store) {
	r1 := mustCreate(t, s, "k", "v1")
	r2 := mustUpdate(t, s, "k", "v2", r1)
	if r2 <= r1 {
		t.Fatalf("update revision %d after %d", r2, r1)
	}
	want := storage.KeyValue{Key: "k", Value: []byte("v2"), CreateRevision: r1, ModRevision: r2}
	if kv := mustGet(t, s, "k"); !sameKV(kv, want) {
		t.Fatalf("after update Get = %s, want %s", kvString(kv), kvString(want))
	}
	_, err := s.Update(t.Context(), "k", []byte("stale"), r1)
	expectErr(t, "stale Update", err, storage.ErrConflict)
	var ce *storage.ConflictError
	if !errors.As(err, &ce) || ce.Key != "k" || !sameKV(ce.Current, want) {
		t.Fatalf("conflict error %#v does not carry the current key %s", err, kvString(want))
	}
	_, err = s.Update(t.Context(), "missing", []byte("x"), r1)
	expectErr(t, "Update of a missing key", err, storage.ErrNotFound)
	if cur := mustRevision(t, s); cur != r2 {
		t.Fatalf("failed updates moved the revision to %d", cur)
	}
	if kv := mustGet(t, s, "k"); !sameKV(kv, want) {
		t.Fatalf("failed update changed the key to %s", kvString(kv))
	}
}

func testDeleteCAS(t *testing.T, s storage.Store) {
	r1 := mustCreate(t, s, "k", "v1")
	r2 := mustUpdate(t, s, "k", "v2", r1)
	_, _, err := s.Delete(t.Context(), "k", r1)
	expectErr(t, "stale Delete", err, storage.ErrConflict)
	var ce *storage.ConflictError
	if !errors.As(err, &ce) || ce.Current.ModRevision != r2 || string(ce.Current.Value) != "v2" {
		t.Fatalf("conflict error %#v does not carry the current key", err)
	}
	r3, kv := mustDelete(t, s, "k", r2)
	want := storage.KeyValue{Key: "k", Value: []byte("v2"), CreateRevision: r1, ModRevision: r2}
	if r3 <= r2 || !sameKV(kv, want) {
		t.Fatalf("Delete = %d, %s; want > %d, %s", r3, kvString(kv), r2, kvString(want))
	}
	_, err = s.Get(t.Context(), "k")
	expectErr(t, "Get after Delete", err, storage.ErrNotFound)
	_, _, err = s.Delete(t.Context(), "k", 0)
	expectErr(t, "second Delete", err, storage.ErrNotFound)
	_, err = s.Update(t.Context(), "k", []byte("x"), r2)
	expectErr(t, "Update after Delete", err, storage.ErrNotFound)

	r4 := mustCreate(t, s, "k", "again")
	if kv := mustGet(t, s, "k"); kv.CreateRevision != r4 || kv.ModRevision != r4 {
		t.Fatalf("recreated key is %s, want created at %d", kvString(kv), r4)
	}
	r5, kv := mustDelete(t, s, "k", 0)
	if r5 <= r4 || string(kv.Value) != "again" || kv.ModRevision != r4 {
		t.Fatalf("unconditional Delete = %d, %s", r5, kvString(kv))
	}
}

func testValuesAreCopied(t *testing.T, s storage.Store) {
	buf := []byte("original")
	rev, err := s.Create(t.Context(), "k", buf)
	if err != nil {
		t.Fatal(err)
	}
	copy(buf, "XXXXXXXX")
	kv := mustGet(t, s, "k")
	if string(kv.Value) != "original" {
		t.Fatalf("store kept the caller's buffer: %q", kv.Value)
	}
	copy(kv.Value, "YYYYYYYY")
	res := mustList(t, s, "", storage.ListOptions{})
	if len(res.KVs) != 1 || string(res.KVs[0].Value) != "original" {
		t.Fatalf("store handed out its own buffer: %v", kvStrings(res.KVs))
	}
	copy(res.KVs[0].Value, "ZZZZZZZZ")
	if kv := mustGet(t, s, "k"); string(kv.Value) != "original" || kv.ModRevision != rev {
		t.Fatalf("List result aliases the store: %s", kvString(kv))
	}
}

func testCountAndStats(t *testing.T, s storage.Store) {
	for _, k := range []string{"a/1", "a/2", "a/3", "ab/1", "b/1"} {
		mustCreate(t, s, k, "v")
	}
	mustDelete(t, s, "a/3", 0)
	for prefix, want := range map[string]int64{"a/": 2, "a": 3, "b/": 1, "": 4, "c/": 0} {
		n, err := s.Count(t.Context(), prefix)
		if err != nil || n != want {
			t.Fatalf("Count(%q) = %d, %v; want %d", prefix, n, err, want)
		}
	}
	st, err := s.Stats(t.Context())
	if err != nil || st.Keys != 4 || st.SizeBytes <= 0 {
		t.Fatalf("Stats = %+v, %v; want 4 keys and a positive size", st, err)
	}
}

func testClosed(t *testing.T, s storage.Store) {
	rev := mustCreate(t, s, "k", "v")
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	ctx := t.Context()
	_, err := s.Get(ctx, "k")
	expectErr(t, "Get after Close", err, storage.ErrClosed)
	_, err = s.List(ctx, "", storage.ListOptions{})
	expectErr(t, "List after Close", err, storage.ErrClosed)
	_, err = s.Create(ctx, "k2", nil)
	expectErr(t, "Create after Close", err, storage.ErrClosed)
	_, err = s.Update(ctx, "k", nil, rev)
	expectErr(t, "Update after Close", err, storage.ErrClosed)
	_, _, err = s.Delete(ctx, "k", 0)
	expectErr(t, "Delete after Close", err, storage.ErrClosed)
	_, err = s.Watch(ctx, "", 0)
	expectErr(t, "Watch after Close", err, storage.ErrClosed)
	expectErr(t, "Compact after Close", s.Compact(ctx, rev), storage.ErrClosed)
}
