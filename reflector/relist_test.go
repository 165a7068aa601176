package reflector_test

import (
	"context"
	"fmt"
	"maps"
	"net/url"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/setpoint-dev/setpoint/cache"
	"github.com/setpoint-dev/setpoint/internal/apiserver"
	"github.com/setpoint-dev/setpoint/internal/storage"
	"github.com/setpoint-dev/setpoint/reflector"
)

// smallHistory makes the server keep only a few events per resource and
// compact only when the test says so; it returns where the store will be.
func smallHistory(st *storage.Store) func(*apiserver.Config) {
	return func(c *apiserver.Config) {
		c.WatchCacheCapacity = 3
		c.CompactionInterval = -1
		*st = c.Storage
	}
}

// compactNow discards all history before the current revision.
func compactNow(st storage.Store) error {
	ctx := context.Background()
	cur, err := st.CurrentRevision(ctx)
	if err != nil {
		return err
	}
	if err := st.Compact(ctx, cur); err != nil {
		return fmt.Errorf("compact at %d: %w", cur, err)
	}
	return nil
}

// While the reflector is cut off, more changes happen than the server's
// watch history holds and storage is compacted. Resuming the watch gets
// 410 Gone; the reflector relists and the sink (a real cache.Queue applied
// to a real indexer) ends up with the server's state: objects deleted in
// the meantime are removed with a DeletedFinalStateUnknown tombstone.
func TestRelistAfterWatchExpired(t *testing.T) {
	cases := []struct {
		name     string
		pageSize int64
		// compact says when storage is compacted: during the outage, or
		// when the relist asks for its second page (its continue token
		// then names a compacted revision).
		compact string
		// streaming: lists are streaming lists (none of the lists below
		// happen; one more streaming watch does).
		streaming bool
		// wantLists are the (resourceVersion, limit, status) of the lists
		// after the outage; "last" stands for the last synced version,
		// "continue" for a page requested with a continue token.
		wantLists [][3]string
	}{
		// With an explicit page size every list is paginated: the relist
		// at the last version is an exact read, which compaction made
		// impossible (410), so the reflector lists the newest state, in
		// pages of 2 (5 objects: 3 pages).
		{"paginated", 2, "outage", false, [][3]string{{"last", "2", "410"}, {"", "2", "200"}, {"continue", "2", "200"}, {"continue", "2", "200"}}},
		// With the default page size the first list came back whole from
		// the watch cache, so the relist at the last version asks without
		// a limit, and the cache answers it (no 410, no storage read).
		{"from watch cache", 0, "outage", false, [][3]string{{"last", "", "200"}}},
		// The relist at the last version starts (storage still has it) but
		// its continue token expires: the reflector lists the newest state.
		{"continue token expired", 2, "continue", false, [][3]string{
			{"last", "2", "200"}, {"continue", "2", "410"}, {"", "2", "200"}, {"continue", "2", "200"}, {"continue", "2", "200"}}},
		// A streaming list resumes from the last version, not older than
		// it, which the server can always serve.
		{"streaming", 0, "outage", true, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var st storage.Store
			h := newHarness(t, smallHistory(&st))
			for _, n := range []string{"a", "b", "c", "d"} {
				createCM(t, h.direct, n, "0")
			}
			sink := newQueueSink[*corev1.ConfigMap](t)
			r := reflector.New[*corev1.ConfigMap](h.cms, sink.q, reflector.Options{
				PageSize: tc.pageSize, WatchList: &tc.streaming, Selectors: onlyTestObjects, Logger: testLogger(),
				Backoff: reflector.Backoff{Initial: 10 * time.Millisecond, Max: 100 * time.Millisecond},
			})
			running(t, r.Run)
			eventually(t, "the initial list", func() bool { return len(sink.contents(cmValue)) == 4 })
			eventually(t, "the watch", func() bool { return len(h.http.seen(request.watch)) == 1 })
			eventually(t, "a synced version", func() bool { return r.LastSyncResourceVersion() != "" })
			lastRV := r.LastSyncResourceVersion()
			_, batchesBefore := sink.snapshot()
			before := len(h.http.seen(func(request) bool { return true }))

			h.tcp.SetDown(true)
			deleteCM(t, h.direct, "a")
			deleteCM(t, h.direct, "b")
			c, err := h.direct.Get(context.Background(), "c", getOpts)
			if err != nil {
				t.Fatal(err)
			}
			updateCM(t, h.direct, c, "1")
			for _, n := range []string{"e", "f", "g"} {
				createCM(t, h.direct, n, "0")
			}
			switch tc.compact {
			case "outage":
				if err := compactNow(st); err != nil {
					t.Fatal(err)
				}
			case "continue":
				var once sync.Once
				h.http.setBefore(func(q url.Values) {
					if q.Has("continue") {
						once.Do(func() {
							if err := compactNow(st); err != nil {
								t.Errorf("compact: %v", err)
							}
						})
					}
				})
			}
			h.tcp.SetDown(false)

			want := map[string]string{"c": "1", "d": "0", "e": "0", "f": "0", "g": "0"}
			eventually(t, "the relisted state", func() bool { return maps.Equal(sink.contents(cmValue), want) })

			events, batches := sink.snapshot()
			if got := batches[len(batchesBefore):]; len(got) != 1 || got[0] != cache.ReplaceBatch {
				t.Errorf("batches after the outage = %v, want one replace", got)
			}
			deleted := map[string]bool{}
			for _, ev := range events {
				if ev.Type == cache.EventDelete {
					if ev.Tombstone == nil || !ev.Tombstone.ObjKnown || ev.Old.Name != ev.Tombstone.Obj.Name {
						t.Errorf("delete of %s: tombstone %+v, want the last known state", ev.Key, ev.Tombstone)
					}
					deleted[ev.Old.Name] = true
				}
			}
			if !maps.Equal(deleted, map[string]bool{"a": true, "b": true}) {
				t.Errorf("deleted = %v, want a and b", deleted)
			}

			after := h.http.seen(func(request) bool { return true })[before:]
			var expired bool
			var lists [][3]string
			streams := 0
			for _, req := range after {
				switch {
				case req.watch() && req.Expired:
					expired = req.Query.Get("resourceVersion") == lastRV
				case req.streaming():
					streams++
					if rv := req.Query.Get("resourceVersion"); rv != lastRV {
						t.Errorf("streaming relist from %q, want from the last version %s", rv, lastRV)
					}
				case req.list():
					rv := req.Query.Get("resourceVersion")
					switch {
					case req.Query.Has("continue"):
						rv = "continue"
					case rv == lastRV:
						rv = "last"
					}
					lists = append(lists, [3]string{rv, req.Query.Get("limit"), fmt.Sprint(req.Status)})
				}
			}
			if !expired {
				t.Errorf("no watch from %s answered 410 after the outage: %v", lastRV, queries(after))
			}
			if tc.streaming && streams != 1 {
				t.Errorf("%d streaming lists after the outage, want 1", streams)
			}
			if fmt.Sprint(lists) != fmt.Sprint(tc.wantLists) {
				t.Errorf("lists after the outage = %v, want %v", lists, tc.wantLists)
			}
			if err := r.LastError(); err != nil {
				t.Errorf("LastError = %v after a successful relist", err)
			}
		})
	}
}

func queries(reqs []request) []url.Values {
	out := make([]url.Values, len(reqs))
	for i, r := range reqs {
		out[i] = r.Query
	}
	return out
}
