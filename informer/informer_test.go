package informer

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/setpoint-dev/setpoint/rest"
)

type cmInformer = Informer[*corev1.ConfigMap]

func newCMInformer(c *rest.Client, opts Options[*corev1.ConfigMap]) *cmInformer {
	opts.Resource = cmGVR.GroupResource()
	return New[*corev1.ConfigMap, *corev1.ConfigMapList](configMaps(c), opts)
}

func create(t *testing.T, c *rest.Client, name, v string) *corev1.ConfigMap {
	t.Helper()
	cm, err := configMaps(c).Create(context.Background(), configMap(name, v), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
	return cm
}

func addHandler(t *testing.T, inf *cmInformer, h Handler[*corev1.ConfigMap], opts HandlerOptions) *Registration {
	t.Helper()
	reg, err := inf.AddEventHandler(h, opts)
	if err != nil {
		t.Fatalf("add handler %q: %v", opts.Name, err)
	}
	return reg
}

func waitSynced(t *testing.T, synced ...func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	if !WaitForCacheSync(ctx, synced...) {
		t.Fatal("caches did not sync")
	}
}

// versions maps "namespace/name" to resourceVersion.
func versions(objs []*corev1.ConfigMap) map[string]string {
	out := map[string]string{}
	for _, o := range objs {
		out[key(o)] = o.ResourceVersion
	}
	return out
}

func TestSyncAndOrderedDeliveryToTwoHandlers(t *testing.T) {
	_, c, _ := start(t)
	ctx := context.Background()
	create(t, c, "a", "1")
	create(t, c, "b", "1")

	inf := newCMInformer(c, Options[*corev1.ConfigMap]{})
	one, two := newRecorder[*corev1.ConfigMap](), newRecorder[*corev1.ConfigMap]()
	reg1 := addHandler(t, inf, one, HandlerOptions{Name: "one"})
	reg2 := addHandler(t, inf, two, HandlerOptions{Name: "two"})
	if inf.IsStarted() || inf.HasSynced() {
		t.Fatal("informer started or synced before Run")
	}
	running(t, inf)
	waitSynced(t, inf.HasSynced, reg1.HasSynced, reg2.HasSynced)
	if !inf.IsStarted() || inf.LastSyncResourceVersion() == "" || inf.LastError() != nil {
		t.Fatalf("started=%v rv=%q err=%v", inf.IsStarted(), inf.LastSyncResourceVersion(), inf.LastError())
	}
	for _, r := range []*recorder[*corev1.ConfigMap]{one, two} {
		r.expectSet(t, "add default/a initial=true", "add default/b initial=true")
	}

	create(t, c, "c", "1")
	a, err := configMaps(c).Get(ctx, "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a.Data["v"] = "2"
	if _, err := configMaps(c).Update(ctx, a, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := configMaps(c).Delete(ctx, "b", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, r := range []*recorder[*corev1.ConfigMap]{one, two} {
		r.expect(t, "add default/c initial=false", "update default/a 2", "delete default/b unknown=false")
	}

	// The store is updated before handlers hear of a change, so it now
	// equals the server.
	list, err := configMaps(c).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	server := versions(func() []*corev1.ConfigMap {
		out := make([]*corev1.ConfigMap, len(list.Items))
		for k := range list.Items {
			out[k] = &list.Items[k]
		}
		return out
	}())
	cached, err := inf.Lister().Namespace("default").List(nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := versions(cached); !mapsEqual(got, server) {
		t.Fatalf("lister %v, server %v", got, server)
	}
	if _, err := inf.Lister().Namespace("default").Get("b"); !apierrors.IsNotFound(err) {
		t.Fatalf("get deleted b: %v, want NotFound", err)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func TestSlowHandlerDoesNotDelayOthers(t *testing.T) {
	_, c, _ := start(t)
	reg := prometheus.NewRegistry()
	metrics, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	inf := newCMInformer(c, Options[*corev1.ConfigMap]{Metrics: metrics})
	slow := newRecorder[*corev1.ConfigMap]()
	slow.block = make(chan struct{})
	fast := newRecorder[*corev1.ConfigMap]()
	addHandler(t, inf, slow, HandlerOptions{Name: "slow"})
	addHandler(t, inf, fast, HandlerOptions{Name: "fast"})
	running(t, inf)
	waitSynced(t, inf.HasSynced)

	for _, n := range []string{"x1", "x2", "x3"} {
		create(t, c, n, "1")
	}
	fast.expect(t, "add default/x1 initial=false", "add default/x2 initial=false", "add default/x3 initial=false")
	// slow was handed each event before fast (registration order) and has
	// returned from none.
	if got := gauge(t, reg, "configmaps", "slow"); got != 3 {
		t.Fatalf("slow pending = %v, want 3", got)
	}
	slow.expectNone(t)

	close(slow.block)
	slow.expect(t, "add default/x1 initial=false", "add default/x2 initial=false", "add default/x3 initial=false")
	eventually(t, "pending gauges back to 0", func() bool {
		return gauge(t, reg, "configmaps", "slow") == 0 && gauge(t, reg, "configmaps", "fast") == 0
	})
}

func TestResyncReachesOnlyItsHandlerWithoutServerCalls(t *testing.T) {
	_, c, counter := start(t)
	create(t, c, "a", "1")
	create(t, c, "b", "1")
	fake := testingclock.NewFakeClock(time.Now())
	inf := newCMInformer(c, Options[*corev1.ConfigMap]{Clock: fake})
	period := time.Minute
	resyncing := newRecorder[*corev1.ConfigMap]()
	plain := newRecorder[*corev1.ConfigMap]()
	addHandler(t, inf, resyncing, HandlerOptions{Name: "resyncing", ResyncPeriod: &period})
	addHandler(t, inf, plain, HandlerOptions{Name: "plain"})
	running(t, inf)
	waitSynced(t, inf.HasSynced)
	for _, r := range []*recorder[*corev1.ConfigMap]{resyncing, plain} {
		r.expectSet(t, "add default/a initial=true", "add default/b initial=true")
	}
	eventually(t, "resync ticker", fake.HasWaiters)

	requests := counter.n.Load()
	fake.Step(period)
	resyncing.expect(t, "resync default/a", "resync default/b")
	if got := counter.n.Load(); got != requests {
		t.Fatalf("resync sent %d requests to the server", got-requests)
	}

	// The resync batch was dispatched before this creation: had plain been
	// given it, its resyncs would come first.
	create(t, c, "m", "1")
	plain.expect(t, "add default/m initial=false")
	resyncing.expect(t, "add default/m initial=false")

	fake.Step(period)
	resyncing.expect(t, "resync default/a", "resync default/b", "resync default/m")
}

func TestLateHandlerGetsCacheAsInitialAdds(t *testing.T) {
	_, c, _ := start(t)
	create(t, c, "a", "1")
	create(t, c, "b", "1")
	inf := newCMInformer(c, Options[*corev1.ConfigMap]{})
	running(t, inf)
	waitSynced(t, inf.HasSynced)

	late := newRecorder[*corev1.ConfigMap]()
	late.entered = make(chan struct{}, 10)
	late.block = make(chan struct{})
	reg := addHandler(t, inf, late, HandlerOptions{Name: "late"})
	<-late.entered
	if reg.HasSynced() {
		t.Fatal("late registration synced before its handler saw the cache")
	}
	create(t, c, "c", "1")
	close(late.block)
	late.expectSet(t, "add default/a initial=true", "add default/b initial=true")
	late.expect(t, "add default/c initial=false")
	eventually(t, "late registration synced", reg.HasSynced)
}

func TestRemoveEventHandlerStopsDelivery(t *testing.T) {
	_, c, _ := start(t)
	reg := prometheus.NewRegistry()
	metrics, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	inf := newCMInformer(c, Options[*corev1.ConfigMap]{Metrics: metrics})
	kept := newRecorder[*corev1.ConfigMap]()
	removed := newRecorder[*corev1.ConfigMap]()
	removed.entered = make(chan struct{}, 10)
	removed.block = make(chan struct{})
	addHandler(t, inf, kept, HandlerOptions{Name: "kept"})
	gone := addHandler(t, inf, removed, HandlerOptions{Name: "removed"})
	running(t, inf)
	waitSynced(t, inf.HasSynced)

	create(t, c, "y", "1")
	create(t, c, "z", "1")
	kept.expect(t, "add default/y initial=false", "add default/z initial=false")
	<-removed.entered // blocked in OnAdd(y), with z pending
	if err := inf.RemoveEventHandler(gone); err != nil {
		t.Fatal(err)
	}
	close(removed.block)
	removed.expect(t, "add default/y initial=false") // the callback in progress finishes
	create(t, c, "w", "1")
	kept.expect(t, "add default/w initial=false")
	// w was handed out (and dropped for removed) before kept got it; z was
	// dropped at removal.
	removed.expectNone(t)
	eventually(t, "removed handler's gauge back to 0", func() bool {
		return gauge(t, reg, "configmaps", "removed") == 0
	})

	if err := inf.RemoveEventHandler(gone); err == nil {
		t.Fatal("second removal succeeded")
	}
	other := newCMInformer(c, Options[*corev1.ConfigMap]{})
	foreign, err := other.AddEventHandler(newRecorder[*corev1.ConfigMap](), HandlerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := inf.RemoveEventHandler(foreign); err == nil {
		t.Fatal("removing another informer's registration succeeded")
	}
	if foreign.Name() != "unnamed" {
		t.Fatalf("default handler name %q", foreign.Name())
	}
}
