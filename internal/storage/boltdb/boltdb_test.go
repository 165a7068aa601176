package boltdb

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
	"go.uber.org/goleak"

	"github.com/setpoint-dev/setpoint/internal/storage"
	"github.com/setpoint-dev/setpoint/internal/storage/storagetest"
)

func TestMain(m *testing.M) {
	if path := os.Getenv(crashPathEnv); path != "" {
		round, _ := strconv.Atoi(os.Getenv(crashRoundEnv))
		os.Exit(crashChild(path, round))
	}
	goleak.VerifyTestMain(m)
}

func openTemp(t testing.TB) storage.Store {
	s, err := Open(filepath.Join(t.TempDir(), "store.db"), Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return s
}

func TestConformance(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Store { return openTemp(t) })
}

func TestReopenKeepsStateAndHistory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	must := func(rev int64, err error) int64 {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return rev
	}
	r1 := must(s.Create(ctx, "r/a", []byte("a1")))
	r2 := must(s.Create(ctx, "r/b", []byte("b1")))
	r3 := must(s.Update(ctx, "r/a", []byte("a2"), r1))
	r4, _, err := s.Delete(ctx, "r/b", r2)
	must(r4, err)
	if err := s.Compact(ctx, r3); err != nil {
		t.Fatal(err)
	}
	r5 := must(s.Create(ctx, "r/c", []byte("c1")))
	before, err := s.List(ctx, "r/", storage.ListOptions{Revision: r4})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s, err = Open(path, Options{})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer s.Close()
	if cur, _ := s.CurrentRevision(ctx); cur != r5 {
		t.Fatalf("reopened at revision %d, want %d", cur, r5)
	}
	if comp, _ := s.CompactedRevision(ctx); comp != r3 {
		t.Fatalf("reopened with compacted revision %d, want %d", comp, r3)
	}
	if n, _ := s.Count(ctx, "r/"); n != 2 {
		t.Fatalf("reopened with %d keys, want 2", n)
	}
	after, err := s.List(ctx, "r/", storage.ListOptions{Revision: r4})
	if err != nil || len(after.KVs) != len(before.KVs) || after.KVs[0].ModRevision != r3 {
		t.Fatalf("history at %d after reopen: %+v, %v; before %+v", r4, after, err, before)
	}
	if _, err := s.List(ctx, "r/", storage.ListOptions{Revision: r3 - 1}); !errors.Is(err, storage.ErrCompacted) {
		t.Fatalf("compacted history readable after reopen: %v", err)
	}
	w, err := s.Watch(ctx, "r/", r3)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	var evs []storage.Event
	for len(evs) < 2 {
		evs = append(evs, (<-w.Responses()).Events...)
	}
	if evs[0].Type != storage.EventDelete || string(evs[0].PrevValue) != "b1" || evs[1].Key != "r/c" {
		t.Fatalf("replayed events after reopen: %+v", evs)
	}
	if rev := must(s.Create(ctx, "r/d", nil)); rev != r5+1 {
		t.Fatalf("first write after reopen at %d, want %d", rev, r5+1)
	}
	// The key index was rebuilt: CAS works on keys written before.
	if _, err := s.Update(ctx, "r/a", []byte("x"), r1); !errors.Is(err, storage.ErrConflict) {
		t.Fatalf("stale update after reopen: %v", err)
	}
	must(s.Update(ctx, "r/a", []byte("a3"), r3))
}

func TestSecondOpenFailsWhileLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s2, err := Open(path, Options{LockTimeout: 10 * time.Millisecond})
	if err == nil {
		s2.Close()
		t.Fatal("a second Open of a locked file succeeded")
	}
	if !errors.Is(err, bolt.ErrTimeout) {
		t.Fatalf("second Open: %v, want a lock timeout", err)
	}
}

func BenchmarkCreate1KiB(b *testing.B) {
	for _, clients := range []int{16, 64} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			s := openTemp(b)
			defer s.Close()
			storagetest.BenchmarkCreate(b, s, clients, 1024)
		})
	}
}

func BenchmarkList10000(b *testing.B) {
	s := openTemp(b)
	defer s.Close()
	storagetest.BenchmarkList(b, s, 10000, 1024)
}
