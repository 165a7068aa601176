package watchcache

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"
)

// The metamorphic test drives random writes through a real memory store
// while opening watches at random revisions with random selectors, listing
// and getting from the cache; everything the cache returns is checked
// against the model (the full event log filtered by the Kubernetes rules).

const (
	metaWindow = 40
	metaOps    = 500
)

var (
	metaNamespaces = []string{"ns0", "ns1", "ns2"}
	metaLabelSels  = []string{"", "app=a", "app!=b", "app in (a,c)", "tier", "!tier", "app=a,tier=x", "app notin (a)"}
	// The selectors with an exact metadata.name or tier term are indexed
	// (tier is the run's trigger field, changed by updates, so an update
	// moves objects between the watchers of two tier values).
	metaFieldSels = []string{"", "metadata.name=cm1", "metadata.namespace=ns1", "metadata.name!=cm2", "metadata.name=cm3,metadata.namespace=ns0",
		"tier=x", "tier=y", "tier=", "tier==x,metadata.namespace=ns1", "tier!=x", "metadata.name=cm2,tier=y"}
)

func TestMetamorphic(t *testing.T) {
	seeds := []uint64{1, 2, 3, 4, 5, 6}
	if s := os.Getenv("WATCHCACHE_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("WATCHCACHE_SEED: %v", err)
		}
		seeds = []uint64{n}
	} else {
		seeds = append(seeds, uint64(time.Now().UnixNano()))
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Logf("reproduce with WATCHCACHE_SEED=%d", seed)
			newMeta(t, seed).run(metaOps)
		})
	}
}

// metaRun is one randomized run.
type metaRun struct {
	t     *testing.T
	rng   *rand.Rand
	e     *env
	m     *model
	other int
	// expired counts watches refused as too old; ended counts watchers
	// ended by the cache (too slow, or overrun while catching up).
	expired, ended int
	// listRev is the revision of the cache's first list: the oldest
	// position it serves.
	listRev  int64
	watchers []*metaWatcher
}

// metaWatcher is an open watch and what it has received.
type metaWatcher struct {
	w       *Watcher
	f       modelFilter
	initial bool
	// from is the FromRevision position, or for an initial-events watch
	// the minimum revision requested.
	from   int64
	frames []Frame
	done   chan struct{}
}

func newMeta(t *testing.T, seed uint64) *metaRun {
	r := &metaRun{t: t, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), m: newModel()}
	r.e = newEnv(t, configMaps, func(c *Config) {
		c.WindowCapacity = metaWindow
		c.IndexFields = []string{"tier"}
		c.WatcherBuffer = 4096
		c.ListPageSize = 7 // several pages per list
	}, func(e *env) {
		r.e = e
		for range 12 {
			r.write()
		}
	})
	r.listRev = r.m.events[len(r.m.events)-1].rev
	return r
}

func (r *metaRun) run(ops int) {
	for range ops {
		switch p := r.rng.IntN(100); {
		case p < 65:
			r.write()
		case p < 72:
			r.writeOther()
		case p < 82:
			r.watchFrom()
		case p < 88:
			r.watchInitial()
		case p < 95:
			r.checkList()
		default:
			r.checkGet()
		}
	}
	r.finish()
}

func (r *metaRun) randomLabels() map[string]string {
	l := map[string]string{}
	if v := r.rng.IntN(4); v < 3 {
		l["app"] = string(rune('a' + v))
	}
	if v := r.rng.IntN(3); v < 2 {
		l["tier"] = string(rune('x' + v))
	}
	return l
}

// write creates, updates or deletes a random ConfigMap.
func (r *metaRun) write() {
	ns := metaNamespaces[r.rng.IntN(len(metaNamespaces))]
	name := "cm" + strconv.Itoa(r.rng.IntN(6))
	key := cmKey(ns, name)
	if _, exists := r.m.state[key]; exists && r.rng.IntN(4) == 0 {
		r.m.del(key, r.e.remove(key))
		return
	}
	o := &modelObj{ns: ns, name: name, labels: r.randomLabels(), data: strconv.Itoa(r.rng.IntN(1000))}
	obj := configMap(ns, name, o.labels, o.data)
	if _, exists := r.m.state[key]; exists {
		o.rev = r.e.update(key, obj)
	} else {
		o.rev = r.e.create(key, obj)
	}
	r.m.put(o)
}

// writeOther writes outside the prefix: the store advances, the cache only
// learns it through progress notifications.
func (r *metaRun) writeOther() {
	r.other++
	key := otherPrefix + "default/s" + strconv.Itoa(r.other)
	if _, err := r.e.store.Create(context.Background(), key, []byte("x")); err != nil {
		r.t.Fatalf("Create(%q): %v", key, err)
	}
}

func (r *metaRun) randomFilter() modelFilter {
	f := modelFilter{
		label: mustSelector(r.t, metaLabelSels[r.rng.IntN(len(metaLabelSels))]),
		field: mustFieldSelector(r.t, metaFieldSels[r.rng.IntN(len(metaFieldSels))]),
	}
	if r.rng.IntN(2) == 0 {
		f.ns = metaNamespaces[r.rng.IntN(len(metaNamespaces))]
	}
	return f
}

// watchFrom opens a watch from a random recent revision: it must either
// deliver exactly the later events or be Expired because the window no
// longer holds them.
func (r *metaRun) watchFrom() {
	storeRev := r.e.storeRev()
	from := max(r.listRev, storeRev-int64(r.rng.IntN(3*metaWindow)))
	f := r.randomFilter()
	w, err := r.e.cache.Watch(context.Background(), WatchOptions{
		Namespace: f.ns, Label: f.label, Field: f.field, Mode: FromRevision, ResourceVersion: from,
		BufferSize: r.bufferSize(),
	})
	behind := r.m.eventsIn(from, storeRev)
	if xe, ok := errorAs[*ExpiredError](err); ok {
		if behind <= metaWindow || xe.Requested != from || xe.Oldest <= from {
			r.t.Fatalf("watch from %d expired (%v) with %d events behind and a window of %d", from, err, behind, metaWindow)
		}
		r.expired++
		return
	}
	if err != nil {
		r.t.Fatalf("Watch from %d: %v", from, err)
	}
	r.track(&metaWatcher{w: w, f: f, from: from})
}

// watchInitial opens a sendInitialEvents watch, sometimes with a minimum
// revision (the consistent-read form).
func (r *metaRun) watchInitial() {
	var minRev int64
	if r.rng.IntN(2) == 0 {
		minRev = r.e.storeRev()
	}
	f := r.randomFilter()
	w, err := r.e.cache.Watch(context.Background(), WatchOptions{
		Namespace: f.ns, Label: f.label, Field: f.field, Mode: InitialEvents,
		ResourceVersion: minRev, SendInitialEvents: true, BufferSize: r.bufferSize(),
	})
	if err != nil {
		r.t.Fatalf("initial-events Watch: %v", err)
	}
	r.track(&metaWatcher{w: w, f: f, initial: true, from: minRev})
}

// bufferSize is mostly large; small buffers exercise the catch-up path
// and, when the collector lags, the too-slow path.
func (r *metaRun) bufferSize() int {
	switch r.rng.IntN(4) {
	case 0:
		return 2
	case 1:
		return 8
	}
	return 4096
}

func (r *metaRun) track(mw *metaWatcher) {
	mw.done = make(chan struct{})
	go func() {
		defer close(mw.done)
		for f := range mw.w.Frames() {
			mw.frames = append(mw.frames, f)
		}
	}()
	r.watchers = append(r.watchers, mw)
}

// checkList does a consistent list and compares it with the model.
func (r *metaRun) checkList() {
	rev := r.e.storeRev()
	if err := r.e.cache.WaitForRevision(context.Background(), rev); err != nil {
		r.t.Fatalf("WaitForRevision(%d): %v", rev, err)
	}
	f := r.randomFilter()
	objs, lrev, err := r.e.cache.List(ListOptions{Namespace: f.ns, Label: f.label, Field: f.field})
	if err != nil {
		r.t.Fatalf("List: %v", err)
	}
	if lrev < rev || lrev > r.e.storeRev() {
		r.t.Fatalf("List at revision %d, want between %d and the store's %d", lrev, rev, r.e.storeRev())
	}
	want := r.m.initialAt(f, lrev)
	if len(objs) != len(want) {
		r.t.Fatalf("List(%+v) at %d: %d objects, want %d", f, lrev, len(objs), len(want))
	}
	for i, obj := range objs {
		m, err := meta.Accessor(obj)
		if err != nil {
			r.t.Fatal(err)
		}
		w := want[i].obj
		if m.GetNamespace() != w.ns || m.GetName() != w.name ||
			m.GetResourceVersion() != strconv.FormatInt(w.rev, 10) || !labels.Equals(m.GetLabels(), w.labels) {
			r.t.Fatalf("List item %d: %s/%s@%s %v, want %s@%d %v", i, m.GetNamespace(), m.GetName(),
				m.GetResourceVersion(), m.GetLabels(), w.key(), w.rev, w.labels)
		}
	}
}

func (r *metaRun) checkGet() {
	rev := r.e.storeRev()
	if err := r.e.cache.WaitForRevision(context.Background(), rev); err != nil {
		r.t.Fatalf("WaitForRevision(%d): %v", rev, err)
	}
	ns := metaNamespaces[r.rng.IntN(len(metaNamespaces))]
	key := cmKey(ns, "cm"+strconv.Itoa(r.rng.IntN(6)))
	obj, found, grev, err := r.e.cache.Get(key)
	if err != nil {
		r.t.Fatalf("Get(%q): %v", key, err)
	}
	want, exists := r.m.stateAt(grev)[key]
	if found != exists {
		r.t.Fatalf("Get(%q) at %d: found %v, model says %v", key, grev, found, exists)
	}
	if found {
		m, _ := meta.Accessor(obj)
		if m.GetResourceVersion() != strconv.FormatInt(want.rev, 10) {
			r.t.Fatalf("Get(%q): resourceVersion %s, want %d", key, m.GetResourceVersion(), want.rev)
		}
	}
}

// finish waits until every watcher has caught up with the last write,
// stops them and checks what each received.
func (r *metaRun) finish() {
	final := r.e.sync()
	for _, mw := range r.watchers {
		waitUntil(r.t, "watcher to go live", func() bool {
			r.e.cache.wmu.Lock()
			defer r.e.cache.wmu.Unlock()
			return mw.w.state != catchingUp
		})
	}
	for _, mw := range r.watchers {
		mw.w.Stop()
		<-mw.done
	}
	for i, mw := range r.watchers {
		what := fmt.Sprintf("watcher %d (%+v from %d, initial %v)", i, mw.f, mw.from, mw.initial)
		if r.endedByCache(what, mw) {
			continue
		}
		if !mw.initial {
			checkFrames(r.t, what, mw.frames, r.m.expectedAfter(mw.f, mw.from))
			continue
		}
		r.checkInitial(what, mw)
	}
	got := r.e.cache.Metrics()
	if got.Watchers != 0 || got.Revision < final || got.WatchersTooSlow+got.WatchersExpired != uint64(r.ended) {
		r.t.Fatalf("metrics after the run: %+v (%d watchers ended by the cache)", got, r.ended)
	}
	r.t.Logf("%d events, %d watchers (%d ended by the cache), %d watches refused as expired, final revision %d",
		len(r.m.events), len(r.watchers), r.ended, r.expired, final)
}

// checkInitial splits an initial-events watch at its end bookmark.
func (r *metaRun) checkInitial(what string, mw *metaWatcher) {
	end := -1
	for i, f := range mw.frames {
		if f.Type == watch.Bookmark {
			end = i
			break
		}
	}
	if end < 0 {
		r.t.Fatalf("%s: no initial-events-end bookmark among %d frames", what, len(mw.frames))
	}
	bm := decodeFrame(r.t, mw.frames[end])
	if bm.Object.Metadata.Annotations["k8s.io/initial-events-end"] != "true" {
		r.t.Fatalf("%s: end bookmark without the annotation: %+v", what, bm.Object.Metadata)
	}
	at := mw.frames[end].Revision
	if at < mw.from {
		r.t.Fatalf("%s: initial events at %d, older than the requested %d", what, at, mw.from)
	}
	checkFrames(r.t, what+" initial", mw.frames[:end], r.m.initialAt(mw.f, at))
	checkFrames(r.t, what+" live", mw.frames[end+1:], r.m.expectedAfter(mw.f, at))
}

// endedByCache checks a watcher the cache ended (it fell behind, or the
// window overran its catch-up): an ERROR frame 410 Expired comes last, and
// what came before is the expected sequence cut short, with no gap.
func (r *metaRun) endedByCache(what string, mw *metaWatcher) bool {
	err := mw.w.Err()
	if err == nil {
		return false
	}
	_, expired := errorAs[*ExpiredError](err)
	if !expired && err != ErrWatcherTooSlow {
		r.t.Fatalf("%s ended with %v", what, err)
	}
	r.ended++
	n := len(mw.frames)
	if n == 0 || mw.frames[n-1].Type != watch.Error {
		r.t.Fatalf("%s ended with %v but no ERROR frame last", what, err)
	}
	if st := decodeFrame(r.t, mw.frames[n-1]); st.Object.Code != 410 || st.Object.Reason != "Expired" {
		r.t.Fatalf("%s: ERROR frame %+v, want 410 Expired", what, st.Object)
	}
	got := mw.frames[:n-1]
	var want []expected
	if mw.initial {
		// The end bookmark tells the snapshot revision if it arrived.
		at := int64(-1)
		for i, f := range got {
			if f.Type == watch.Bookmark {
				at, got = f.Revision, append(append([]Frame(nil), got[:i]...), got[i+1:]...)
				break
			}
		}
		if at < 0 {
			return true // cut inside the snapshot, whose revision is unknown
		}
		want = append(r.m.initialAt(mw.f, at), r.m.expectedAfter(mw.f, at)...)
	} else {
		want = r.m.expectedAfter(mw.f, mw.from)
	}
	checkPrefix(r.t, what, got, want)
	return true
}

// checkPrefix checks that got is a prefix of want.
func checkPrefix(t *testing.T, what string, got []Frame, want []expected) {
	t.Helper()
	if len(got) > len(want) {
		t.Fatalf("%s: %d frames, more than the %d expected", what, len(got), len(want))
	}
	for i := range got {
		if !frameIs(t, got[i], want[i]) {
			t.Fatalf("%s: frame %d is not the expected one: the prefix has a gap or a wrong event", what, i)
		}
	}
}

func frameIs(t *testing.T, f Frame, want expected) bool {
	w := decodeFrame(t, f)
	return f.Type == want.typ && w.Object.Metadata.Name == want.obj.name &&
		w.Object.Metadata.Namespace == want.obj.ns && f.Revision == want.obj.rev
}
