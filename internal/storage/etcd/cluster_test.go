package etcd_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/setpoint-dev/setpoint/internal/storage"
	"github.com/setpoint-dev/setpoint/internal/storage/etcd/etcdtest"
	"github.com/setpoint-dev/setpoint/internal/testwait"
)

// TestKillLeaderDuringWrites runs writers against a 3-member cluster
// through all endpoints, kills the leader with SIGKILL in the middle, and
// checks that the writes continue, that every acknowledged write is there
// with the revision it was acknowledged at, and that a watch opened before
// the kill delivers every acknowledged write exactly once, in order.
func TestKillLeaderDuringWrites(t *testing.T) {
	c := etcdtest.StartCluster(t, 3)
	s := open(t, c.Endpoints())
	start, err := s.CurrentRevision(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	w, err := s.Watch(t.Context(), "load/", start)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	var (
		mu    sync.Mutex
		acked = map[string]int64{} // key -> revision of its acknowledged create
		n     atomic.Int64
		fails atomic.Int64
		stop  = make(chan struct{})
		wg    sync.WaitGroup
	)
	for g := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				key := fmt.Sprintf("load/%d/%06d", g, i)
				rev, err := s.Create(t.Context(), key, []byte("v"))
				if err != nil {
					fails.Add(1) // unacknowledged: may or may not be applied
					time.Sleep(10 * time.Millisecond)
					continue
				}
				mu.Lock()
				acked[key] = rev
				mu.Unlock()
				n.Add(1)
			}
		})
	}
	waitFor := func(target int64) {
		err := testwait.Poll(t.Context(), 30*time.Second, 5*time.Millisecond, func() error {
			if got := n.Load(); got < target {
				return fmt.Errorf("only %d acknowledged writes, want %d", got, target)
			}
			return nil
		})
		if err != nil {
			close(stop)
			wg.Wait()
			t.Fatal(err)
		}
	}
	waitFor(200)
	lead := -1
	for i, ep := range c.Endpoints() {
		st, err := s.Client().Status(t.Context(), ep)
		if err == nil && st.Header.MemberId == st.Leader {
			lead = i
		}
	}
	if lead < 0 {
		t.Fatal("no leader found")
	}
	c.Kill(lead)
	atKill := n.Load()
	waitFor(atKill + 300)
	close(stop)
	wg.Wait()
	t.Logf("%d acknowledged writes (%d after killing the leader m%d), %d failed attempts", n.Load(), n.Load()-atKill, lead, fails.Load())

	// Every acknowledged write is there, at its acknowledged revision.
	res, err := s.List(t.Context(), "load/", storage.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]int64{}
	for _, kv := range res.KVs {
		have[kv.Key] = kv.ModRevision
	}
	for k, rev := range acked {
		if have[k] != rev {
			t.Fatalf("acknowledged %s at %d, store has it at %d", k, rev, have[k])
		}
	}
	// The watch saw every key of the store exactly once, in order.
	cur, err := s.CurrentRevision(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int64{}
	last := start
	w.RequestProgress()
	deadline := time.After(30 * time.Second)
	for last < cur {
		select {
		case resp, ok := <-w.Responses():
			if !ok {
				t.Fatalf("watch ended: %v", w.Err())
			}
			for _, e := range resp.Events {
				if e.Revision <= last {
					t.Fatalf("event %s at %d after %d", e.Key, e.Revision, last)
				}
				last = e.Revision
				if _, dup := seen[e.Key]; dup {
					t.Fatalf("event for %s delivered twice", e.Key)
				}
				seen[e.Key] = e.Revision
			}
			if len(resp.Events) == 0 {
				last = max(last, resp.Revision)
			}
			if last < cur {
				w.RequestProgress()
			}
		case <-deadline:
			t.Fatalf("watch at %d, want %d", last, cur)
		}
	}
	if len(seen) != len(have) {
		t.Fatalf("watch saw %d keys, the store has %d", len(seen), len(have))
	}
	for k, rev := range have {
		if seen[k] != rev {
			t.Fatalf("watch saw %s at %d, store has %d", k, seen[k], rev)
		}
	}
	// The killed member rejoins and catches up.
	c.Restart(lead)
}
