package watchcache

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	testingclock "k8s.io/utils/clock/testing"
)

func TestBookmarksPeriodicAndBeforeDeadline(t *testing.T) {
	fc := testingclock.NewFakeClock(time.Unix(1_000_000, 0))
	e := newEnv(t, configMaps, func(c *Config) { c.Clock = fc }, func(e *env) {
		e.create(cmKey("a", "k"), configMap("a", "k", nil, "0"))
	})
	rev := e.sync()
	w := e.watch(WatchOptions{Mode: FromRevision, ResourceVersion: rev, AllowBookmarks: true,
		Deadline: fc.Now().Add(30 * time.Second)})
	plain := e.watch(WatchOptions{Mode: FromRevision, ResourceVersion: rev})

	// The pre-deadline bookmark is due 2s before the deadline.
	waitUntil(t, "the bookmark timer", func() bool { return fc.Waiters() == 1 })
	fc.Step(27 * time.Second)
	expectNone(t, w)
	fc.Step(time.Second)
	expectBookmark(t, w, rev)

	r2 := e.update(cmKey("a", "k"), configMap("a", "k", nil, "1"))
	expectFrame(t, w, watch.Modified, "k", r2)
	expectFrame(t, plain, watch.Modified, "k", r2) // no bookmark before it

	// Then the periodic one, a minute after the watch started, at the
	// revision of the last event.
	waitUntil(t, "the periodic bookmark timer", func() bool { return fc.Waiters() == 1 })
	fc.Step(32 * time.Second)
	expectBookmark(t, w, r2)
	waitUntil(t, "the next periodic bookmark timer", func() bool { return fc.Waiters() == 1 })
	fc.Step(DefaultBookmarkInterval)
	expectBookmark(t, w, r2)

	r3 := e.update(cmKey("a", "k"), configMap("a", "k", nil, "2"))
	expectFrame(t, plain, watch.Modified, "k", r3)
	expectFrame(t, w, watch.Modified, "k", r3)
}

func expectBookmark(t *testing.T, w *Watcher, rev int64) {
	t.Helper()
	f, ok := next(t, w)
	if !ok || f.Type != watch.Bookmark || f.Revision != rev {
		t.Fatalf("got %v (open %v), want a BOOKMARK at %d", f.Type, ok, rev)
	}
	got := decodeFrame(t, f)
	if got.Object.Kind != "ConfigMap" || got.Object.Metadata.Name != "" || len(got.Object.Metadata.Annotations) != 0 {
		t.Fatalf("bookmark object %+v", got.Object)
	}
}

func TestWaitForRevisionTooLarge(t *testing.T) {
	fc := testingclock.NewFakeClock(time.Unix(1_000_000, 0))
	e := newEnv(t, configMaps, func(c *Config) { c.Clock = fc }, func(e *env) {
		e.create(cmKey("a", "k"), configMap("a", "k", nil, "0"))
	})
	e.sync()
	target := e.storeRev() + 10
	errc := make(chan error, 1)
	go func() { errc <- e.cache.WaitForRevision(context.Background(), target) }()
	waitUntil(t, "the wait's timer", fc.HasWaiters)
	fc.Step(DefaultProgressTimeout)
	err := <-errc
	tl, ok := errorAs[*TooLargeError](err)
	if !ok || !errors.Is(err, ErrTooLarge) || tl.Requested != target || tl.Current != e.cache.Revision() {
		t.Fatalf("WaitForRevision(%d): %v", target, err)
	}
	st := apiStatus(t, err)
	if st.Code != http.StatusGatewayTimeout || st.Reason != metav1.StatusReasonTimeout || st.Details == nil ||
		st.Details.RetryAfterSeconds != RetryAfterSeconds || len(st.Details.Causes) != 1 ||
		st.Details.Causes[0].Type != metav1.CauseTypeResourceVersionTooLarge {
		t.Fatalf("too large status: %+v", st)
	}

	// A watch from a future revision waits the same way.
	go func() {
		_, err := e.cache.Watch(context.Background(), WatchOptions{Mode: FromRevision, ResourceVersion: target})
		errc <- err
	}()
	waitUntil(t, "the watch's timer", fc.HasWaiters)
	fc.Step(DefaultProgressTimeout)
	if err := <-errc; !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Watch from %d: %v", target, err)
	}
}

// TestWaitForRevisionAfterOtherWrites is a consistent read's wait while
// another resource is written: the revision the store reports is reached
// through the progress notification the wait asks for, without its retry
// (which never fires on this fake clock), even when the read learns the
// revision the moment the store makes it current, before the store hands
// the write to its watchers.
func TestWaitForRevisionAfterOtherWrites(t *testing.T) {
	fc := testingclock.NewFakeClock(time.Unix(1_000_000, 0))
	e := newEnv(t, configMaps, func(c *Config) { c.Clock = fc }, nil)
	ctx := t.Context()
	for i := range 3000 {
		before := e.storeRev()
		errc := make(chan error, 1)
		go func() {
			_, err := e.store.Create(ctx, fmt.Sprintf("/registry/leases/other/%d", i), []byte("v"))
			errc <- err
		}()
		rev := before
		for rev == before {
			rev = e.storeRev()
		}
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := e.cache.WaitForRevision(wctx, rev)
		cancel()
		if err != nil {
			t.Fatalf("WaitForRevision(%d), cache at %d: %v", rev, e.cache.Revision(), err)
		}
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
}
