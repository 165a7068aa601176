package watchcache

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/setpoint-dev/setpoint/internal/storage"
)

// TestUndecodableValuesAreSkipped: a value the decoder rejects is logged
// and skipped, in the list and in the event stream; the cache keeps going.
func TestUndecodableValuesAreSkipped(t *testing.T) {
	e := newEnv(t, configMaps, nil, func(e *env) {
		if _, err := e.store.Create(context.Background(), cmKey("a", "bad0"), []byte("not protobuf")); err != nil {
			t.Fatal(err)
		}
		e.create(cmKey("a", "good0"), configMap("a", "good0", nil, "0"))
	})
	from := e.sync()
	w := e.watch(WatchOptions{Mode: FromRevision, ResourceVersion: from})
	if _, err := e.store.Create(context.Background(), cmKey("a", "bad1"), []byte("garbage")); err != nil {
		t.Fatal(err)
	}
	r := e.create(cmKey("a", "good1"), configMap("a", "good1", nil, "1"))
	expectFrame(t, w, watch.Added, "good1", r)
	objs, lrev, err := e.cache.List(ListOptions{})
	if err != nil || lrev < r || len(objs) != 2 {
		t.Fatalf("List: %d objects at %d, %v", len(objs), lrev, err)
	}
	for i, name := range []string{"good0", "good1"} {
		if m, _ := meta.Accessor(objs[i]); m.GetName() != name {
			t.Fatalf("List item %d is %q, want %q", i, m.GetName(), name)
		}
	}
}

// TestStoreFailureBacksOffWithTheClock: when the store goes away the cache
// keeps serving its last state and retries with a backoff on its clock.
func TestStoreFailureBacksOffWithTheClock(t *testing.T) {
	fc := testingclock.NewFakeClock(time.Unix(1_000_000, 0))
	e := newEnv(t, configMaps, func(c *Config) { c.Clock = fc }, func(e *env) {
		e.create(cmKey("a", "k"), configMap("a", "k", nil, "0"))
	})
	rev := e.sync()
	if err := e.store.Close(); err != nil {
		t.Fatal(err)
	}
	for attempt := range 3 {
		waitUntil(t, "the backoff timer", fc.HasWaiters)
		if attempt == 0 && e.cache.stream.Load() != nil {
			t.Fatalf("a storage watch is still registered")
		}
		fc.Step(maxBackoff)
	}
	objs, lrev, err := e.cache.List(ListOptions{})
	if err != nil || len(objs) != 1 || lrev != rev {
		t.Fatalf("List while the store is down: %d objects at %d, %v", len(objs), lrev, err)
	}
}

// TestDecodeAnswerEndsWatchersAndRelists: a value whose Decode error
// carries a Status (a conversion webhook that is down) is not skipped:
// the event ends the live watchers with an ERROR frame carrying that
// Status; the cache keeps its state, retries its list while the error
// lasts, and has the object once Decode accepts it.
func TestDecodeAnswerEndsWatchersAndRelists(t *testing.T) {
	var failing atomic.Bool
	e := newEnv(t, configMaps, func(c *Config) {
		inner := c.Decode
		c.Decode = func(kv storage.KeyValue) (k8sruntime.Object, error) {
			if failing.Load() {
				return nil, apierrors.NewInternalError(errors.New("conversion webhook is down"))
			}
			return inner(kv)
		}
	}, func(e *env) {
		e.create(cmKey("a", "k0"), configMap("a", "k0", nil, "0"))
	})
	from := e.sync()
	w := e.watch(WatchOptions{Mode: FromRevision, ResourceVersion: from})
	failing.Store(true)
	r := e.create(cmKey("a", "k1"), configMap("a", "k1", nil, "1"))
	f, ok := next(t, w)
	if !ok || f.Type != watch.Error {
		t.Fatalf("got %v (open %v), want an ERROR frame", f.Type, ok)
	}
	if got := decodeFrame(t, f); got.Object.Code != 500 || got.Object.Reason != "InternalError" {
		t.Fatalf("ERROR frame status %d %s, want the decoder's 500 InternalError", got.Object.Code, got.Object.Reason)
	}
	if _, ok := next(t, w); ok {
		t.Fatal("watcher not closed after its ERROR frame")
	}
	if objs, rev, err := e.cache.List(ListOptions{}); err != nil || len(objs) != 1 || rev >= r {
		t.Fatalf("while failing: %d objects at %d (%v), want the old state (1 object before %d)", len(objs), rev, err, r)
	}
	failing.Store(false)
	waitUntil(t, "cache relisted", func() bool {
		objs, rev, err := e.cache.List(ListOptions{})
		return err == nil && len(objs) == 2 && rev >= r
	})
}
