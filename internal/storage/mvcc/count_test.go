package mvcc_test

import (
	"math/rand/v2"
	"testing"

	"github.com/setpoint-dev/setpoint/internal/storage/memory"
	"github.com/setpoint-dev/setpoint/internal/storage/mvcc"
)

// TestCountAfterWaysAgree: the two ways of counting a page's Remaining
// (the live index corrected by the log since the page's revision, and a
// scan of the snapshot, used when a commit races the list) agree at every
// revision and position, over a random history of creates, updates and
// deletes of keys inside and outside the prefix, with a compaction.
func TestCountAfterWaysAgree(t *testing.T) {
	s, err := mvcc.New(memory.NewBackend(), mvcc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := t.Context()
	rng := rand.New(rand.NewPCG(1, 2))
	keys := []string{"a/0", "a/1", "a/2", "a/3", "a/4", "a/5", "a0", "b/1"}
	var revs []int64
	for range 200 {
		k := keys[rng.IntN(len(keys))]
		kv, err := s.Get(ctx, k)
		switch {
		case err != nil:
			_, err = s.Create(ctx, k, []byte("v"))
		case rng.IntN(2) == 0:
			_, err = s.Update(ctx, k, []byte("w"), kv.ModRevision)
		default:
			_, _, err = s.Delete(ctx, k, 0)
		}
		if err != nil {
			t.Fatal(err)
		}
		rev, _ := s.CurrentRevision(ctx)
		revs = append(revs, rev)
	}
	if err := s.Compact(ctx, revs[50]); err != nil {
		t.Fatal(err)
	}
	for _, rev := range revs[50:] {
		for _, after := range []string{"a/", "a/0", "a/2", "a/5"} {
			fast, scan, err := mvcc.CountAfter(s, "a/", after, rev)
			if err != nil || fast != scan {
				t.Fatalf("after %q at %d: fast %d, scan %d, %v", after, rev, fast, scan, err)
			}
		}
	}
}
