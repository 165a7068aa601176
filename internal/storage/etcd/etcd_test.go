package etcd_test

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/setpoint-dev/setpoint/internal/storage"
	"github.com/setpoint-dev/setpoint/internal/storage/etcd"
	"github.com/setpoint-dev/setpoint/internal/storage/etcd/etcdtest"
	"github.com/setpoint-dev/setpoint/internal/storage/storagetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var storeSeq atomic.Int64

// open returns a store on endpoints under a prefix no other store of the
// process uses, closed when t ends.
func open(t testing.TB, endpoints []string) *etcd.Store {
	t.Helper()
	s, err := etcd.New(t.Context(), etcd.Options{
		Endpoints: endpoints,
		Prefix:    fmt.Sprintf("/t%d/", storeSeq.Add(1)),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestConformance runs the storage conformance and metamorphic suites
// against one real etcd member; each subtest's store has its own prefix and
// sees revisions relative to its opening (see shifted).
func TestConformance(t *testing.T) {
	c := etcdtest.Start(t)
	storagetest.Run(t, func(t *testing.T) storage.Store {
		s, err := etcd.New(t.Context(), etcd.Options{
			Endpoints: c.Endpoints(),
			Prefix:    fmt.Sprintf("/conf%d/", storeSeq.Add(1)),
		})
		if err != nil {
			t.Fatal(err)
		}
		base, err := s.CurrentRevision(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		return &shifted{s: s, base: base}
	})
}

// TestRevisionsAreEtcds checks that the store exposes etcd's revisions
// unchanged, so that resourceVersion is etcd's revision, and that keys
// live under the prefix.
func TestRevisionsAreEtcds(t *testing.T) {
	c := etcdtest.Start(t)
	s, err := etcd.New(t.Context(), etcd.Options{Endpoints: c.Endpoints(), Prefix: "/cluster-a"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rev, err := s.Create(t.Context(), "/registry/pods/default/a", []byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Client().Get(t.Context(), "/cluster-a/registry/pods/default/a")
	if err != nil || len(got.Kvs) != 1 || got.Kvs[0].ModRevision != rev || got.Header.Revision != rev {
		t.Fatalf("etcd has %v, %v; want the key at revision %d", got, err, rev)
	}
	if kv, err := s.Get(t.Context(), "/registry/pods/default/a"); err != nil || kv.ModRevision != rev || kv.Key != "/registry/pods/default/a" {
		t.Fatalf("Get = %+v, %v", kv, err)
	}
}

// TestWatchFromCompactedRevision: a watch from before etcd's compaction
// fails with a CompactedError naming etcd's compacted revision, including
// when etcd was compacted behind the store's back.
func TestWatchFromCompactedRevision(t *testing.T) {
	c := etcdtest.Start(t)
	s := open(t, c.Endpoints())
	var revs []int64
	for i := range 5 {
		r, err := s.Create(t.Context(), fmt.Sprintf("k%d", i), []byte("v"))
		if err != nil {
			t.Fatal(err)
		}
		revs = append(revs, r)
	}
	if err := s.Compact(t.Context(), revs[2]); err != nil {
		t.Fatal(err)
	}
	_, err := s.Watch(t.Context(), "", revs[0])
	var ce *storage.CompactedError
	if !errors.As(err, &ce) || ce.Compacted != revs[2] || ce.Requested != revs[0] {
		t.Fatalf("Watch from %d after Compact(%d) = %v", revs[0], revs[2], err)
	}
	// Another client compacts further: the store finds out.
	if _, err := s.Client().Compact(t.Context(), revs[4]); err != nil {
		t.Fatal(err)
	}
	_, err = s.Watch(t.Context(), "", revs[3])
	if !errors.As(err, &ce) || ce.Compacted != revs[4] {
		t.Fatalf("Watch from %d after an external Compact(%d) = %v", revs[3], revs[4], err)
	}
	_, err = s.List(t.Context(), "", storage.ListOptions{Revision: revs[3]})
	if !errors.As(err, &ce) || ce.Compacted != revs[4] {
		t.Fatalf("List at %d after Compact(%d) = %v", revs[3], revs[4], err)
	}
	if comp, err := s.CompactedRevision(t.Context()); err != nil || comp != revs[4] {
		t.Fatalf("CompactedRevision = %d, %v; want %d", comp, err, revs[4])
	}
	w, err := s.Watch(t.Context(), "", revs[4])
	if err != nil {
		t.Fatalf("Watch from the compacted revision: %v", err)
	}
	w.Stop()
}

// TestProgressWhileOthersWrite: a progress notification on a quiet prefix
// carries a revision covering writes under other prefixes, and arrives
// even while the stream's watcher is catching up from the past (etcd drops
// such requests; the store repeats them).
func TestProgressWhileOthersWrite(t *testing.T) {
	c := etcdtest.Start(t)
	s := open(t, c.Endpoints())
	first, err := s.Create(t.Context(), "quiet/a", []byte("a"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2000 {
		if _, err := s.Create(t.Context(), fmt.Sprintf("busy/%d", i), []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	cur, err := s.CurrentRevision(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	w, err := s.Watch(t.Context(), "quiet/", first-1)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	w.RequestProgress()
	var events int
	deadline := time.After(20 * time.Second)
	for {
		select {
		case resp, ok := <-w.Responses():
			if !ok {
				t.Fatalf("watch ended: %v", w.Err())
			}
			events += len(resp.Events)
			if len(resp.Events) == 0 && resp.Revision >= cur {
				if events != 1 {
					t.Fatalf("%d events before progress at %d, want 1", events, resp.Revision)
				}
				return
			}
		case <-deadline:
			t.Fatal("no progress notification")
		}
	}
}
