package watchcache

import (
	"context"
	"net/http"
	"strconv"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/setpoint-dev/setpoint/internal/storage"
)

// TestRelistAfterCompactionExpiresWatchers ends the cache's storage watch
// after the store compacted past the cache's position: the cache must list
// again, end its watchers with 410 Expired, and serve the new state.
func TestRelistAfterCompactionExpiresWatchers(t *testing.T) {
	e := newEnv(t, configMaps, nil, func(e *env) {
		e.create(cmKey("a", "k"), configMap("a", "k", nil, "0"))
		e.create(cmKey("a", "gone"), configMap("a", "gone", nil, "0"))
	})
	from := e.sync()
	w := e.watch(WatchOptions{Mode: FromRevision, ResourceVersion: from})
	r := e.update(cmKey("a", "k"), configMap("a", "k", nil, "1"))
	expectFrame(t, w, watch.Modified, "k", r)
	e.remove(cmKey("a", "gone"))
	expectFrame(t, w, watch.Deleted, "gone", e.storeRev())

	var errFrame Frame
	for attempt := 0; errFrame.lf == nil; attempt++ {
		if attempt == 100 {
			t.Fatalf("the cache never had to list again")
		}
		box := currentStream(t, e.cache)
		// Advance the store outside the prefix (the cache learns it only
		// from a progress notification), compact, then end the watch.
		if _, err := e.store.Create(context.Background(), otherPrefix+"a/s"+strconv.Itoa(attempt), []byte("x")); err != nil {
			t.Fatal(err)
		}
		if err := e.store.(storage.Compactor).Compact(context.Background(), e.storeRev()); err != nil {
			t.Fatal(err)
		}
		box.s.Stop()
		// Either the cache lists again (the watcher ends) or it had seen
		// the new revision through a progress notification and simply
		// watches again: then try once more.
		waitUntil(t, "a new storage watch", func() bool {
			b := e.cache.stream.Load()
			return b != nil && b != box
		})
		if f, ok, _ := w.q.tryPop(); ok {
			errFrame = f
		}
	}
	st := decodeFrame(t, errFrame)
	if errFrame.Type != watch.Error || st.Object.Code != http.StatusGone || st.Object.Reason != "Expired" {
		t.Fatalf("got %s %+v, want ERROR 410 Expired", errFrame.Type, st.Object)
	}
	if _, ok := next(t, w); ok {
		t.Fatalf("watcher still open after the ERROR frame")
	}
	if _, ok := errorAs[*ExpiredError](w.Err()); !ok {
		t.Fatalf("Err: %v", w.Err())
	}
	m := e.cache.Metrics()
	if m.Relists != 2 || m.WatchersExpired != 1 || m.Watchers != 0 || m.WindowEvents != 0 {
		t.Fatalf("metrics: %+v", m)
	}
	// The old position is no longer served; the new state is.
	if _, err := e.cache.Watch(context.Background(), WatchOptions{Mode: FromRevision, ResourceVersion: from}); err == nil {
		t.Fatalf("watch from %d served after the re-list", from)
	}
	objs, lrev, err := e.cache.List(ListOptions{})
	if err != nil || len(objs) != 1 {
		t.Fatalf("List after re-list: %d objects, %v", len(objs), err)
	}
	if m, _ := meta.Accessor(objs[0]); m.GetName() != "k" || m.GetResourceVersion() != strconv.FormatInt(r, 10) {
		t.Fatalf("List after re-list: %s@%s", m.GetName(), m.GetResourceVersion())
	}
	w2 := e.watch(WatchOptions{Mode: FromRevision, ResourceVersion: lrev})
	r2 := e.update(cmKey("a", "k"), configMap("a", "k", nil, "2"))
	expectFrame(t, w2, watch.Modified, "k", r2)
}

func currentStream(t *testing.T, c *Cache) *streamBox {
	t.Helper()
	var b *streamBox
	waitUntil(t, "the storage watch", func() bool {
		b = c.stream.Load()
		return b != nil
	})
	return b
}
