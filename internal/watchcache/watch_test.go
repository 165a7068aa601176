package watchcache

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/setpoint-dev/setpoint/internal/scheme"
	"github.com/setpoint-dev/setpoint/internal/storage/memory"
)

func TestNotReadyBeforeRun(t *testing.T) {
	codecs := scheme.New()
	store := memory.New()
	defer store.Close()
	c := New(testConfig(codecs, store, configMaps))
	if _, _, err := c.List(ListOptions{}); !errors.Is(err, ErrNotReady) {
		t.Fatalf("List before Run: %v, want ErrNotReady", err)
	}
	if _, err := c.Watch(context.Background(), WatchOptions{Mode: InitialEvents}); !errors.Is(err, ErrNotReady) {
		t.Fatalf("Watch before Run: %v, want ErrNotReady", err)
	}
}

func TestSelectorTransitions(t *testing.T) {
	e := newEnv(t, configMaps, nil, nil)
	w := e.watch(WatchOptions{Namespace: "a", Label: mustSelector(t, "app=web"), Mode: FromRevision,
		ResourceVersion: e.cache.Revision()})
	key := cmKey("a", "x")
	e.create(cmKey("b", "x"), configMap("b", "x", map[string]string{"app": "web"}, "other namespace"))
	e.create(key, configMap("a", "x", map[string]string{"app": "db"}, "0"))
	r1 := e.update(key, configMap("a", "x", map[string]string{"app": "web"}, "1"))
	r2 := e.update(key, configMap("a", "x", map[string]string{"app": "web"}, "2"))
	r3 := e.update(key, configMap("a", "x", map[string]string{"app": "db"}, "3"))
	e.update(key, configMap("a", "x", map[string]string{"app": "db"}, "4"))
	r5 := e.update(key, configMap("a", "x", map[string]string{"app": "web"}, "5"))
	r6 := e.remove(key)

	if got := expectFrame(t, w, watch.Added, "x", r1); got.Object.Data["v"] != "1" {
		t.Fatalf("ADDED carries %v", got.Object.Data)
	}
	expectFrame(t, w, watch.Modified, "x", r2)
	// Leaving the selection is DELETED with the new object.
	if got := expectFrame(t, w, watch.Deleted, "x", r3); got.Object.Metadata.Labels["app"] != "db" || got.Object.Data["v"] != "3" {
		t.Fatalf("DELETED on leaving carries %+v %v", got.Object.Metadata, got.Object.Data)
	}
	expectFrame(t, w, watch.Added, "x", r5)
	if got := expectFrame(t, w, watch.Deleted, "x", r6); got.Object.Data["v"] != "5" {
		t.Fatalf("DELETED carries %v, want the last value", got.Object.Data)
	}
	e.sync()
	expectNone(t, w)
}

func TestPodFieldSelector(t *testing.T) {
	e := newEnv(t, pods, nil, nil)
	w := e.watch(WatchOptions{Field: mustFieldSelector(t, "spec.nodeName=node1"), Mode: InitialEvents})
	pod := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "p"},
	}
	key := podPrefix + "default/p"
	e.create(key, pod)
	pod.Spec.NodeName = "node1"
	bound := e.update(key, pod)
	pod.Status.Phase = corev1.PodRunning
	running := e.update(key, pod)
	if got := expectFrame(t, w, watch.Added, "p", bound); got.Object.Kind != "Pod" || got.Object.Spec.NodeName != "node1" {
		t.Fatalf("binding frame: %+v", got.Object)
	}
	expectFrame(t, w, watch.Modified, "p", running)
	objs, _, err := e.cache.List(ListOptions{Field: mustFieldSelector(t, "status.phase=Running")})
	if err != nil || len(objs) != 1 || objs[0].(*corev1.Pod).Name != "p" {
		t.Fatalf("List by status.phase: %v, %v", objs, err)
	}
}

func TestInitialEventsAndEndBookmark(t *testing.T) {
	e := newEnv(t, configMaps, nil, func(e *env) {
		e.create(cmKey("a", "z"), configMap("a", "z", map[string]string{"app": "web"}, "z"))
		e.create(cmKey("a", "m"), configMap("a", "m", map[string]string{"app": "web"}, "m"))
		e.create(cmKey("a", "n"), configMap("a", "n", map[string]string{"app": "db"}, "n"))
		e.create(cmKey("b", "b"), configMap("b", "b", map[string]string{"app": "web"}, "b"))
	})
	rev := e.sync()
	w := e.watch(WatchOptions{Namespace: "a", Label: mustSelector(t, "app=web"), Mode: InitialEvents,
		SendInitialEvents: true, AllowBookmarks: true})
	expectFrame(t, w, watch.Added, "m", 2)
	expectFrame(t, w, watch.Added, "z", 1)
	f, _ := next(t, w)
	bm := decodeFrame(t, f)
	if f.Type != watch.Bookmark || f.Revision != rev || bm.Object.Kind != "ConfigMap" ||
		bm.Object.Metadata.Annotations[metav1.InitialEventsAnnotationKey] != "true" || bm.Object.Metadata.Name != "" {
		t.Fatalf("end bookmark: %s %+v", f.Type, bm.Object)
	}
	up := e.update(cmKey("a", "z"), configMap("a", "z", map[string]string{"app": "web"}, "z2"))
	expectFrame(t, w, watch.Modified, "z", up)

	// A plain resourceVersion="0" watch: the same ADDED events, no bookmark.
	plain := e.watch(WatchOptions{Namespace: "a", Label: mustSelector(t, "app=web"), Mode: InitialEvents})
	expectFrame(t, plain, watch.Added, "m", 2)
	expectFrame(t, plain, watch.Added, "z", up)
	e.sync()
	expectNone(t, plain)
}

func TestWatchFromRevisionWindow(t *testing.T) {
	e := newEnv(t, configMaps, func(c *Config) { c.WindowCapacity = 5 }, func(e *env) {
		e.create(cmKey("a", "seed"), configMap("a", "seed", nil, "0"))
	})
	var revs []int64
	for i := range 8 {
		revs = append(revs, e.update(cmKey("a", "seed"), configMap("a", "seed", nil, strconv.Itoa(i+1))))
	}
	e.sync()
	// The window holds the last 5 events: from revs[2] on, all later ones.
	w := e.watch(WatchOptions{Mode: FromRevision, ResourceVersion: revs[2]})
	for _, r := range revs[3:] {
		expectFrame(t, w, watch.Modified, "seed", r)
	}
	expectNone(t, w)

	_, err := e.cache.Watch(context.Background(), WatchOptions{Mode: FromRevision, ResourceVersion: revs[1]})
	xe, ok := errorAs[*ExpiredError](err)
	if !ok || !errors.Is(err, ErrExpired) || xe.Requested != revs[1] || xe.Oldest != revs[2] {
		t.Fatalf("watch from an evicted revision: %v", err)
	}
	st := apiStatus(t, err)
	if st.Code != http.StatusGone || st.Reason != metav1.StatusReasonExpired || st.Status != metav1.StatusFailure {
		t.Fatalf("expired status: %+v", st)
	}
}

// apiStatus extracts the status the server would send, as it would.
func apiStatus(t *testing.T, err error) metav1.Status {
	t.Helper()
	var s apierrors.APIStatus
	if !errors.As(err, &s) {
		t.Fatalf("%v does not carry an API status", err)
	}
	return s.Status()
}

func TestCatchUpBacklogLargerThanBuffer(t *testing.T) {
	e := newEnv(t, configMaps, nil, func(e *env) {
		e.create(cmKey("a", "k"), configMap("a", "k", nil, "0"))
	})
	from := e.sync()
	var revs []int64
	for i := range 20 {
		revs = append(revs, e.update(cmKey("a", "k"), configMap("a", "k", nil, strconv.Itoa(i))))
	}
	e.sync()
	w := e.watch(WatchOptions{Mode: FromRevision, ResourceVersion: from, BufferSize: 4})
	// The backlog goes out at the reader's pace while new events arrive.
	// The watcher goes live with at most 2 of its 4 slots used, so the 2
	// new events cannot overflow it even if they arrive together.
	for i := 0; i < len(revs); i++ {
		expectFrame(t, w, watch.Modified, "k", revs[i])
		if i == 0 || i == 5 {
			revs = append(revs, e.update(cmKey("a", "k"), configMap("a", "k", nil, "more"+strconv.Itoa(i))))
		}
	}
	e.sync()
	expectNone(t, w)
	if w.Err() != nil {
		t.Fatalf("Err: %v", w.Err())
	}
}

func TestCatchUpOverrunIsExpired(t *testing.T) {
	e := newEnv(t, configMaps, func(c *Config) { c.WindowCapacity = 6 }, func(e *env) {
		e.create(cmKey("a", "k"), configMap("a", "k", nil, "0"))
	})
	from := e.sync()
	for i := range 4 {
		e.update(cmKey("a", "k"), configMap("a", "k", nil, strconv.Itoa(i)))
	}
	e.sync()
	w := e.watch(WatchOptions{Mode: FromRevision, ResourceVersion: from, BufferSize: 1})
	// The reader does not read while the window moves past its position.
	for i := range 10 {
		e.update(cmKey("a", "k"), configMap("a", "k", nil, "late"+strconv.Itoa(i)))
	}
	e.sync()
	var last Frame
	for f := range w.Frames() {
		last = f
	}
	if st := decodeFrame(t, last); last.Type != watch.Error || st.Object.Code != http.StatusGone || st.Object.Reason != "Expired" {
		t.Fatalf("last frame %s %+v, want ERROR 410 Expired", last.Type, st.Object)
	}
	if _, ok := errorAs[*ExpiredError](w.Err()); !ok {
		t.Fatalf("Err: %v, want *ExpiredError", w.Err())
	}
	if m := e.cache.Metrics(); m.WatchersExpired != 1 || m.Watchers != 0 {
		t.Fatalf("metrics: %+v", m)
	}
}

func TestSlowWatcherEndedFastContinues(t *testing.T) {
	e := newEnv(t, configMaps, nil, func(e *env) {
		e.create(cmKey("a", "k"), configMap("a", "k", nil, "0"))
	})
	from := e.sync()
	slow := e.watch(WatchOptions{Mode: FromRevision, ResourceVersion: from, BufferSize: 3})
	fast := e.watch(WatchOptions{Mode: FromRevision, ResourceVersion: from, BufferSize: 3})
	for i := range 10 {
		r := e.update(cmKey("a", "k"), configMap("a", "k", nil, strconv.Itoa(i)))
		expectFrame(t, fast, watch.Modified, "k", r)
	}
	var frames []Frame
	for f := range slow.Frames() {
		frames = append(frames, f)
	}
	n := len(frames)
	if n != 4 || frames[n-1].Type != watch.Error {
		t.Fatalf("slow watcher got %d frames, want its 3 buffered events then ERROR", n)
	}
	for i, f := range frames[:3] { // nothing dropped: the first three updates, in order
		if w := decodeFrame(t, f); f.Type != watch.Modified || w.Object.Data["v"] != strconv.Itoa(i) {
			t.Fatalf("slow watcher frame %d: %s %+v, want MODIFIED of update %d", i, f.Type, w.Object, i)
		}
	}
	st := decodeFrame(t, frames[n-1])
	if st.Object.Kind != "Status" || st.Object.Code != http.StatusGone || st.Object.Reason != "Expired" {
		t.Fatalf("ERROR frame: %+v", st.Object)
	}
	if !errors.Is(slow.Err(), ErrWatcherTooSlow) {
		t.Fatalf("slow Err: %v", slow.Err())
	}
	if fast.Err() != nil {
		t.Fatalf("fast Err: %v", fast.Err())
	}
	if m := e.cache.Metrics(); m.WatchersTooSlow != 1 || m.Watchers != 1 || m.EventsDispatched < 13 {
		t.Fatalf("metrics: %+v", m)
	}
}

func TestFramesShareBytes(t *testing.T) {
	e := newEnv(t, configMaps, nil, func(e *env) {
		e.create(cmKey("a", "k"), configMap("a", "k", map[string]string{"app": "web"}, "0"))
	})
	from := e.sync()
	w1 := e.watch(WatchOptions{Mode: FromRevision, ResourceVersion: from})
	w2 := e.watch(WatchOptions{Namespace: "a", Label: mustSelector(t, "app=web"), Mode: FromRevision, ResourceVersion: from})
	rev := e.update(cmKey("a", "k"), configMap("a", "k", map[string]string{"app": "web"}, "1"))
	f1, _ := next(t, w1)
	f2, _ := next(t, w2)
	sameBytes(t, f1, f2)

	// A watch replaying from the window gets the same bytes too.
	w3 := e.watch(WatchOptions{Mode: FromRevision, ResourceVersion: from})
	f3, _ := next(t, w3)
	sameBytes(t, f1, f3)

	// Initial ADDED frames of one object state are shared as well.
	i1 := e.watch(WatchOptions{Mode: InitialEvents})
	i2 := e.watch(WatchOptions{Mode: InitialEvents, Label: mustSelector(t, "app")})
	a1, _ := next(t, i1)
	a2, _ := next(t, i2)
	sameBytes(t, a1, a2)

	// The bytes are exactly one line of the Kubernetes watch stream.
	b, _ := f1.Bytes()
	obj, err := json.Marshal(f1.Object())
	if err != nil {
		t.Fatal(err)
	}
	want, err := json.Marshal(metav1.WatchEvent{Type: string(watch.Modified), Object: runtime.RawExtension{Raw: obj}})
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != string(want)+"\n" {
		t.Fatalf("frame bytes\n%s\nwant\n%s", b, want)
	}
	if f1.Revision != rev {
		t.Fatalf("frame revision %d, want %d", f1.Revision, rev)
	}
}

func sameBytes(t *testing.T, a, b Frame) {
	t.Helper()
	ba, err := a.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	bb, err := b.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	if unsafe.SliceData(ba) != unsafe.SliceData(bb) || len(ba) != len(bb) {
		t.Fatalf("frames do not share their bytes:\n%s\n%s", ba, bb)
	}
}

func TestWaitForRevisionIdlePrefixCatchesUpViaProgress(t *testing.T) {
	e := newEnv(t, configMaps, nil, func(e *env) {
		e.create(cmKey("a", "k"), configMap("a", "k", nil, "0"))
	})
	e.sync()
	for i := range 5 {
		if _, err := e.store.Create(context.Background(), otherPrefix+"a/s"+strconv.Itoa(i), []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	rev := e.storeRev()
	if err := e.cache.WaitForRevision(context.Background(), rev); err != nil {
		t.Fatalf("WaitForRevision(%d): %v", rev, err)
	}
	if got := e.cache.Revision(); got < rev {
		t.Fatalf("Revision %d after waiting for %d", got, rev)
	}
	// A consistent list is now served at (at least) the store's revision.
	_, lrev, err := e.cache.List(ListOptions{})
	if err != nil || lrev < rev {
		t.Fatalf("List: revision %d, %v", lrev, err)
	}
}

func TestContextCancelEndsWatcher(t *testing.T) {
	e := newEnv(t, configMaps, nil, nil)
	ctx, cancel := context.WithCancel(context.Background())
	w, err := e.cache.Watch(ctx, WatchOptions{Mode: InitialEvents})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	for range w.Frames() {
	}
	if w.Err() != nil {
		t.Fatalf("Err after cancel: %v", w.Err())
	}
	waitUntil(t, "watcher count to drop", func() bool { return e.cache.Metrics().Watchers == 0 })

	// A context that is already done gives a watch that ends at once.
	w, err = e.cache.Watch(ctx, WatchOptions{Mode: InitialEvents})
	if err != nil {
		t.Fatal(err)
	}
	for range w.Frames() {
	}
}

func TestStopEndsWatchersAndReads(t *testing.T) {
	e := newEnv(t, configMaps, nil, func(e *env) {
		e.create(cmKey("a", "k"), configMap("a", "k", nil, "0"))
	})
	from := e.sync()
	for i := range 5 {
		e.update(cmKey("a", "k"), configMap("a", "k", nil, strconv.Itoa(i)))
	}
	e.sync()
	live := e.watch(WatchOptions{Mode: InitialEvents})
	catching := e.watch(WatchOptions{Mode: FromRevision, ResourceVersion: from, BufferSize: 1})
	e.stop()
	<-e.ran
	for range live.Frames() {
	}
	for range catching.Frames() {
	}
	if !errors.Is(live.Err(), ErrStopped) || !errors.Is(catching.Err(), ErrStopped) {
		t.Fatalf("Err after stop: %v, %v", live.Err(), catching.Err())
	}
	if _, _, err := e.cache.List(ListOptions{}); !errors.Is(err, ErrStopped) {
		t.Fatalf("List after stop: %v", err)
	}
	if _, err := e.cache.Watch(context.Background(), WatchOptions{}); !errors.Is(err, ErrStopped) {
		t.Fatalf("Watch after stop: %v", err)
	}
}

// TestBrieflyStalledWatcherIsWaitedFor: a reader that stops for a moment
// while its buffer is full keeps its watch (the dispatch waits within its
// budget) and receives every event in order; with no wait allowed the same
// stall ends the watch.
func TestBrieflyStalledWatcherIsWaitedFor(t *testing.T) {
	for _, tc := range []struct {
		name    string
		wait    time.Duration
		survive bool
	}{{"wait 2s", 2 * time.Second, true}, {"no wait", -1, false}} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, configMaps, func(c *Config) { c.SlowWatcherWait = tc.wait }, func(e *env) {
				e.create(cmKey("a", "k"), configMap("a", "k", nil, "0"))
			})
			from := e.sync()
			w := e.watch(WatchOptions{Mode: FromRevision, ResourceVersion: from, BufferSize: 2})
			done := make(chan struct{})
			go func() {
				defer close(done)
				for i := range 6 { // the third write finds the buffer full
					e.update(cmKey("a", "k"), configMap("a", "k", nil, strconv.Itoa(i)))
				}
				e.sync()
			}()
			time.Sleep(50 * time.Millisecond) // the stall
			if !tc.survive {
				<-done
				var last Frame
				for f := range w.Frames() {
					last = f
				}
				if last.Type != watch.Error || !errors.Is(w.Err(), ErrWatcherTooSlow) {
					t.Fatalf("without a wait the stalled watcher must end: last %s, Err %v", last.Type, w.Err())
				}
				return
			}
			for i := range 6 {
				f := recv(w)
				if f.Type != watch.Modified || decodeFrame(t, f).Object.Data["v"] != strconv.Itoa(i) {
					t.Fatalf("frame %d: %s, want MODIFIED of update %d", i, f.Type, i)
				}
			}
			<-done
			expectNone(t, w)
			if w.Err() != nil || e.cache.Metrics().WatchersTooSlow != 0 {
				t.Fatalf("stalled watcher ended: %v", w.Err())
			}
		})
	}
}

// TestWaitForRevisionUnderWriteStorm waits, from many goroutines, for the
// store's revision on an idle prefix while another prefix is written to
// without pause: a progress notification may report a position taken
// before the waited-for revision was published, and a publish without an
// event of the prefix tells the cache nothing, so a waiter that asked only
// once could wait out its whole timeout. None may fail. (A guard: the
// window, between the store counting a commit and publishing it, is narrow,
// and this test did not hit it before WaitForRevision asked again.)
func TestWaitForRevisionUnderWriteStorm(t *testing.T) {
	e := newEnv(t, configMaps, func(c *Config) { c.ProgressTimeout = 2 * time.Second }, nil)
	e.sync()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var writers sync.WaitGroup
	for w := range 4 {
		writers.Add(1)
		go func() {
			defer writers.Done()
			for i := 0; ctx.Err() == nil; i++ {
				key := otherPrefix + "a/w" + strconv.Itoa(w) + "-" + strconv.Itoa(i)
				if _, err := e.store.Create(ctx, key, []byte("x")); err != nil && ctx.Err() == nil {
					t.Errorf("create %s: %v", key, err)
					return
				}
			}
		}()
	}
	var waiters sync.WaitGroup
	for range 16 {
		waiters.Add(1)
		go func() {
			defer waiters.Done()
			for range 20 {
				rev, err := e.store.CurrentRevision(context.Background())
				if err != nil {
					t.Errorf("CurrentRevision: %v", err)
					return
				}
				if err := e.cache.WaitForRevision(context.Background(), rev); err != nil {
					t.Errorf("WaitForRevision(%d): %v", rev, err)
					return
				}
			}
		}()
	}
	waiters.Wait()
	cancel()
	writers.Wait()
}
