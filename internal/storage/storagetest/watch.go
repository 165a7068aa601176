package storagetest

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/setpoint-dev/setpoint/internal/storage"
)

func watchCases() []testCase {
	return []testCase{
		{"WatchFromPast", testWatchFromPast},
		{"WatchLive", testWatchLive},
		{"WatchProgress", testWatchProgress},
		{"WatchProgressCoversConcurrentWrites", testWatchProgressCoversConcurrentWrites},
		{"WatchCancel", testWatchCancel},
		{"WatchStop", testWatchStop},
		{"WatchEndsOnClose", testWatchEndsOnClose},
	}
}

// writeHistory makes a create, update, delete and re-create on w/ keys and
// writes outside w/, returning the events under w/ in order. The first
// event under w/ is not at revision 1, so that a watch can start before it
// (afterRevision 0 means "from now").
func writeHistory(t *testing.T, s storage.Store) []storage.Event {
	var evs []storage.Event
	mustCreate(t, s, "x/first", "f")
	r := mustCreate(t, s, "w/a", "a1")
	evs = append(evs, storage.Event{Type: storage.EventPut, Key: "w/a", Value: []byte("a1"), Revision: r, Created: true})
	mustCreate(t, s, "x/other", "o")
	r = mustUpdate(t, s, "w/a", "a2", r)
	evs = append(evs, storage.Event{Type: storage.EventPut, Key: "w/a", Value: []byte("a2"), PrevValue: []byte("a1"), Revision: r})
	rb := mustCreate(t, s, "w/b", "b1")
	evs = append(evs, storage.Event{Type: storage.EventPut, Key: "w/b", Value: []byte("b1"), Revision: rb, Created: true})
	r, _ = mustDelete(t, s, "w/a", r)
	evs = append(evs, storage.Event{Type: storage.EventDelete, Key: "w/a", PrevValue: []byte("a2"), Revision: r})
	r = mustCreate(t, s, "w/a", "a3")
	evs = append(evs, storage.Event{Type: storage.EventPut, Key: "w/a", Value: []byte("a3"), Revision: r, Created: true})
	r = mustUpdate(t, s, "w/b", "b2", rb)
	evs = append(evs, storage.Event{Type: storage.EventPut, Key: "w/b", Value: []byte("b2"), PrevValue: []byte("b1"), Revision: r})
	return evs
}

func testWatchFromPast(t *testing.T, s storage.Store) {
	evs := writeHistory(t, s)
	// From before the first write, and from each event's revision.
	w := mustWatch(t, s, "w/", evs[0].Revision-1)
	expectEvents(t, recvAll(t, s, w), evs)
	expectQuiet(t, s, w)
	for i, e := range evs {
		w := mustWatch(t, s, "w/", e.Revision)
		expectEvents(t, recvAll(t, s, w), evs[i+1:])
		expectQuiet(t, s, w)
		w.Stop()
	}
	// A watch from the past continues with live events, without gap.
	r := mustCreate(t, s, "w/c", "c1")
	expectEvents(t, recvAll(t, s, w), []storage.Event{{Type: storage.EventPut, Key: "w/c", Value: []byte("c1"), Revision: r, Created: true}})
	expectQuiet(t, s, w)
}

func testWatchLive(t *testing.T, s storage.Store) {
	mustCreate(t, s, "w/old", "old")
	w := mustWatch(t, s, "w/", 0)
	all := mustWatch(t, s, "", 0)
	expectQuiet(t, s, w)
	evs := writeHistory(t, s)
	expectEvents(t, recvAll(t, s, w), evs)
	expectQuiet(t, s, w)
	// The unfiltered watch also sees the write outside w/.
	got := recvAll(t, s, all)
	if len(got) != len(evs)+2 {
		t.Fatalf("unfiltered watch: %d events, want %d", len(got), len(evs)+2)
	}
	if got[0].Key != "x/first" || got[2].Key != "x/other" {
		t.Fatalf("unfiltered watch: events %s, %s", eventString(got[0]), eventString(got[2]))
	}
	expectEvents(t, append(got[1:2:2], got[3:]...), evs)
	expectQuiet(t, s, all)
}

func testWatchProgress(t *testing.T, s storage.Store) {
	mustCreate(t, s, "w/a", "a")
	w := mustWatch(t, s, "w/", 0)
	expectQuiet(t, s, w)
	// Writes elsewhere advance the progress revision.
	mustCreate(t, s, "x/1", "1")
	mustCreate(t, s, "x/2", "2")
	expectQuiet(t, s, w)
	r := mustCreate(t, s, "w/b", "b")
	expectEvents(t, recvAll(t, s, w), []storage.Event{{Type: storage.EventPut, Key: "w/b", Value: []byte("b"), Revision: r, Created: true}})
	// Several requests never block and give at least one notification.
	mustCreate(t, s, "x/3", "3")
	for range 3 {
		w.RequestProgress()
	}
	if resp := <-w.Responses(); len(resp.Events) != 0 || resp.Revision != mustRevision(t, s) {
		t.Fatalf("progress response %+v", resp)
	}
}

// testWatchProgressCoversConcurrentWrites checks what a watch cache's
// consistent read relies on: a progress notification requested after the
// store reported revision R carries a revision >= R, even while other
// prefixes are written concurrently (the store may have made R current
// before handing its batch to the watchers).
func testWatchProgressCoversConcurrentWrites(t *testing.T, s storage.Store) {
	mustCreate(t, s, "w/a", "a")
	w := mustWatch(t, s, "w/", 0)
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	var writes atomic.Int64
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ctx.Err() == nil; i++ {
				if _, err := s.Create(ctx, fmt.Sprintf("x/%d/%d", g, i), []byte("v")); err != nil && ctx.Err() == nil {
					t.Errorf("Create: %v", err)
					return
				}
				writes.Add(1)
			}
		}()
	}
	defer wg.Wait()
	defer cancel()
	// Enough rounds that many of them overlap a commit.
	for i := 0; i < 2000 || writes.Load() < 2000; i++ {
		rev := mustRevision(t, s)
		w.RequestProgress()
		select {
		case resp, ok := <-w.Responses():
			if !ok {
				t.Fatalf("watch ended: %v", w.Err())
			}
			if len(resp.Events) != 0 {
				t.Fatalf("event under w/ nobody wrote: %+v", resp.Events)
			}
			if resp.Revision < rev {
				t.Fatalf("progress notification at %d, requested after the store reported %d", resp.Revision, rev)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no progress notification within 10s of a request at revision %d", rev)
		}
	}
}

func testWatchCancel(t *testing.T, s storage.Store) {
	ctx, cancel := context.WithCancel(t.Context())
	w, err := s.Watch(ctx, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	r := mustCreate(t, s, "k", "v")
	cancel()
	expectEnd(t, w, nil)
	w.Stop()
	w.RequestProgress() // a no-op on an ended stream
	// A watch catching up from the past is cancelled as well.
	ctx, cancel = context.WithCancel(t.Context())
	w, err = s.Watch(ctx, "", r-1)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	expectEnd(t, w, nil)
	// With a context already done, Watch fails or returns an ended stream.
	if w, err := s.Watch(ctx, "", 0); err == nil {
		expectEnd(t, w, nil)
	}
}

func testWatchStop(t *testing.T, s storage.Store) {
	w, err := s.Watch(t.Context(), "", 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		mustCreate(t, s, string(rune('a'+i)), "v")
	}
	w.Stop()
	w.Stop()
	expectEnd(t, w, nil)
	// The store works on after a stopped watch.
	w2 := mustWatch(t, s, "", 1)
	recvAll(t, s, w2)
	expectQuiet(t, s, w2)
}

func testWatchEndsOnClose(t *testing.T, s storage.Store) {
	r := mustCreate(t, s, "k", "v")
	live := mustWatch(t, s, "", 0)
	past := mustWatch(t, s, "", r-1) // never read: blocked delivering

	expectQuiet(t, s, live)
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	expectEnd(t, live, storage.ErrClosed)
	expectEnd(t, past, storage.ErrClosed)
}
