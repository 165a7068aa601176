package storagetest

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/setpoint-dev/setpoint/internal/storage"
)

// SlowWatcherEvents is how many events the suite queues on a watcher that
// never reads: a store must end such a watcher with
// storage.ErrWatcherTooSlow before that many are pending.
const SlowWatcherEvents = 25000

func concurrencyCases() []testCase {
	return []testCase{
		{"ConcurrentWriters", testConcurrentWriters},
		{"SlowWatcherEnded", testSlowWatcherEnded},
	}
}

type ack struct {
	key, value string
	rev        int64
	created    bool
}

// writeConcurrently runs writers goroutines, each creating n keys under
// prefix and updating every other one, and returns every acknowledged write.
func writeConcurrently(t *testing.T, s storage.Store, prefix string, writers, n int) []ack {
	var (
		mu   sync.Mutex
		acks []ack
		wg   sync.WaitGroup
	)
	for g := range writers {
		wg.Go(func() {
			var mine []ack
			last := int64(0)
			for i := range n {
				key := fmt.Sprintf("%s%02d/%04d", prefix, g, i)
				rev, err := s.Create(t.Context(), key, []byte(key))
				if err != nil {
					t.Errorf("Create(%q): %v", key, err)
					return
				}
				mine = append(mine, ack{key, key, rev, true})
				if i%2 == 0 {
					v := key + "+"
					if rev, err = s.Update(t.Context(), key, []byte(v), rev); err != nil {
						t.Errorf("Update(%q): %v", key, err)
						return
					}
					mine = append(mine, ack{key, v, rev, false})
				}
			}
			for _, a := range mine {
				if a.rev <= last {
					t.Errorf("writer %d: revision %d after %d", g, a.rev, last)
				}
				last = a.rev
			}
			mu.Lock()
			acks = append(acks, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	slices.SortFunc(acks, func(a, b ack) int { return int(a.rev - b.rev) })
	for i := 1; i < len(acks); i++ {
		if acks[i].rev == acks[i-1].rev {
			t.Fatalf("revision %d acknowledged twice (%s, %s)", acks[i].rev, acks[i].key, acks[i-1].key)
		}
	}
	return acks
}

func testConcurrentWriters(t *testing.T, s storage.Store) {
	const writers, n = 16, 60
	w := mustWatch(t, s, "cw/", 0)
	stop := make(chan struct{})
	var readers sync.WaitGroup
	readers.Go(func() { listWhileWriting(t, s, stop) })
	acks := writeConcurrently(t, s, "cw/", writers, n)
	close(stop)
	readers.Wait()
	if t.Failed() {
		return
	}
	if cur := mustRevision(t, s); cur != acks[len(acks)-1].rev {
		t.Fatalf("current revision %d, last acknowledged %d", cur, acks[len(acks)-1].rev)
	}
	got := recvAll(t, s, w)
	if len(got) != len(acks) {
		t.Fatalf("watch delivered %d events, want %d", len(got), len(acks))
	}
	for i, e := range got {
		a := acks[i]
		if e.Revision != a.rev || e.Key != a.key || string(e.Value) != a.value || e.Created != a.created {
			t.Fatalf("event %d is %s, want %s=%q@%d", i, eventString(e), a.key, a.value, a.rev)
		}
	}
	expectQuiet(t, s, w)
	if cnt, err := s.Count(t.Context(), "cw/"); err != nil || cnt != writers*n {
		t.Fatalf("Count = %d, %v; want %d", cnt, err, writers*n)
	}
}

// listWhileWriting lists repeatedly until stop is closed, checking that
// snapshots only move forward.
func listWhileWriting(t *testing.T, s storage.Store, stop <-chan struct{}) {
	var lastRev int64
	lastLen := 0
	for {
		select {
		case <-stop:
			return
		default:
		}
		res, err := s.List(t.Context(), "cw/", storage.ListOptions{})
		if err != nil {
			t.Errorf("List during writes: %v", err)
			return
		}
		if res.Revision < lastRev || len(res.KVs) < lastLen {
			t.Errorf("List went back from %d keys at %d to %d at %d", lastLen, lastRev, len(res.KVs), res.Revision)
			return
		}
		lastRev, lastLen = res.Revision, len(res.KVs)
	}
}

func testSlowWatcherEnded(t *testing.T, s storage.Store) {
	const writers = 64
	slow := mustWatch(t, s, "", 0)
	var (
		wg   sync.WaitGroup
		revs = make(chan int64, SlowWatcherEvents)
	)
	for g := range writers {
		wg.Go(func() {
			for i := g; i < SlowWatcherEvents; i += writers {
				rev, err := s.Create(t.Context(), fmt.Sprintf("sw/%05d", i), []byte("v"))
				if err != nil {
					t.Errorf("Create: %v", err)
					return
				}
				revs <- rev
			}
		})
	}
	wg.Wait()
	close(revs)
	if t.Failed() {
		return
	}
	var acked []int64
	for r := range revs {
		acked = append(acked, r)
	}
	slices.Sort(acked)
	// What the slow watcher did receive is a gap-free prefix of the writes.
	i := 0
	for resp := range slow.Responses() {
		checkResponse(t, resp)
		for _, e := range resp.Events {
			if e.Revision != acked[i] {
				t.Fatalf("slow watcher: event %d at revision %d, want %d", i, e.Revision, acked[i])
			}
			i++
		}
	}
	expectErr(t, "slow watcher", slow.Err(), storage.ErrWatcherTooSlow)
	if i >= len(acked) {
		t.Fatalf("slow watcher received all %d events before it was ended", i)
	}
	// The store and new watches carry on.
	w := mustWatch(t, s, "sw/", 0)
	r := mustCreate(t, s, "sw/after", "x")
	expectEvents(t, recvAll(t, s, w), []storage.Event{{Type: storage.EventPut, Key: "sw/after", Value: []byte("x"), Revision: r, Created: true}})
}
