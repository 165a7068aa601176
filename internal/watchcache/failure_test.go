package watchcache

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/watch"
	testingclock "k8s.io/utils/clock/testing"
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
