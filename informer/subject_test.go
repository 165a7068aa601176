package informer

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/setpoint-dev/setpoint/internal/testwait"
	"github.com/setpoint-dev/setpoint/reflector"
	"github.com/setpoint-dev/setpoint/rest"
)

// chaosKind describes a resource the consistency test writes and caches.
// Every object carries the label chaos=true (the informers select on it)
// and one value, which the test changes.
type chaosKind[T Object, L runtime.Object] struct {
	label      string
	gvr        schema.GroupVersionResource
	namespaced bool
	build      func(name, value string) T
	value      func(T) string
	// withValue returns a deep copy of obj holding value.
	withValue func(obj T, value string) T
	items     func(L) []T
}

const chaosSelector = "chaos=true"

func chaosMeta(name string, namespaced bool) metav1.ObjectMeta {
	m := metav1.ObjectMeta{Name: name, Labels: map[string]string{"chaos": "true"}}
	if namespaced {
		m.Namespace = "default"
	}
	return m
}

// chaosConfigMaps keeps the value in data.v of namespaced ConfigMaps.
var chaosConfigMaps = chaosKind[*corev1.ConfigMap, *corev1.ConfigMapList]{
	label: "configmaps", gvr: cmGVR, namespaced: true,
	build: func(name, v string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: chaosMeta(name, true), Data: map[string]string{"v": v}}
	},
	value: func(cm *corev1.ConfigMap) string { return cm.Data["v"] },
	withValue: func(cm *corev1.ConfigMap, v string) *corev1.ConfigMap {
		out := cm.DeepCopy()
		out.Data = map[string]string{"v": v}
		return out
	},
	items: func(l *corev1.ConfigMapList) []*corev1.ConfigMap { return itemPointers(l.Items) },
}

// chaosNodes keeps the value in the annotation v of cluster-scoped Nodes.
var chaosNodes = chaosKind[*corev1.Node, *corev1.NodeList]{
	label: "nodes", gvr: corev1.SchemeGroupVersion.WithResource("nodes"), namespaced: false,
	build: func(name, v string) *corev1.Node {
		m := chaosMeta(name, false)
		m.Annotations = map[string]string{"v": v}
		return &corev1.Node{ObjectMeta: m}
	},
	value: func(n *corev1.Node) string { return n.Annotations["v"] },
	withValue: func(n *corev1.Node, v string) *corev1.Node {
		out := n.DeepCopy()
		out.Annotations = map[string]string{"v": v}
		return out
	},
	items: func(l *corev1.NodeList) []*corev1.Node { return itemPointers(l.Items) },
}

func itemPointers[E any](items []E) []*E {
	out := make([]*E, len(items))
	for k := range items {
		out[k] = &items[k]
	}
	return out
}

// chaosNames are the names random writes use; fence is kept apart: it is
// never deleted, and quiesce and churn write it.
var chaosNames = []string{"o0", "o1", "o2", "o3", "o4", "o5", "o6", "o7"}

const fence = "fence"

// chaosSubject is one resource under test, as the driver sees it.
type chaosSubject interface {
	label() string
	run(ctx context.Context)
	// connect points the writer at the (re)started server.
	connect(c *rest.Client)
	// write makes one random create, update or delete and describes it.
	write(rnd *rand.Rand) string
	// churn updates the fence n times.
	churn(n int)
	// settle lists the server consistently and checks it against the model.
	settle()
	// quiesce writes the fence, then waits until the cache and both
	// handlers hold exactly the server's state.
	quiesce()
	// beginLost and endLost bracket a phase in which the informer loses
	// its watch position (see lostPhase).
	beginLost()
	endLost()
	// resync steps the fake clock one period and checks the replay.
	resync()
	// finish checks the handlers' journals at the end of a run.
	finish()
}

// subject is a chaosSubject of one kind: an informer through the proxy,
// two handlers (one resyncing), and the test's model of the server.
type subject[T Object, L runtime.Object] struct {
	t     *testing.T
	kind  chaosKind[T, L]
	inf   *Informer[T]
	clock *testingclock.FakeClock
	// resyncing asked for a resync every chaosResync; plain for none.
	resyncing, plain *journal[T]
	// writer reaches the running server directly.
	writer *rest.Resource[T, L]
	// model is every test object as the server last returned it: the
	// server's state, since the test is the only writer.
	model map[string]T
	// writes numbers the values written.
	writes int
	// lost is the running lost phase, nil outside one.
	lost *lostPhase
}

// lostPhase: the informer is quiescent when it begins, then loses its
// watch position (writes beyond the watch cache window, or a server
// restart), and relists. Every object present at the start and deleted
// during the phase must reach both handlers as a deletion with
// finalStateUnknown and the state they had at the start; the phase never
// re-creates such an object.
type lostPhase struct {
	start   map[string]uint64
	deleted map[string]bool
	marks   [2]int
}

const chaosResync = time.Minute

func newSubject[T Object, L runtime.Object](t *testing.T, kind chaosKind[T, L], viaProxy *rest.Client, ropts reflector.Options) *subject[T, L] {
	s := &subject[T, L]{t: t, kind: kind, clock: testingclock.NewFakeClock(time.Now()), model: map[string]T{}}
	ropts.Name = kind.label
	ropts.Selectors = func(o *metav1.ListOptions) { o.LabelSelector = chaosSelector }
	s.inf = New[T, L](s.accessor(viaProxy), Options[T]{
		Clock: s.clock, Reflector: ropts, Logger: ropts.Logger, Resource: kind.gvr.GroupResource(),
	})
	s.resyncing = newJournal(kind.label+"/resyncing", true, kind.value)
	s.plain = newJournal(kind.label+"/plain", false, kind.value)
	period, none := chaosResync, time.Duration(0)
	if _, err := s.inf.AddEventHandler(s.resyncing, HandlerOptions{Name: "resyncing", ResyncPeriod: &period}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.inf.AddEventHandler(s.plain, HandlerOptions{Name: "plain", ResyncPeriod: &none}); err != nil {
		t.Fatal(err)
	}
	return s
}

func (s *subject[T, L]) accessor(c *rest.Client) *rest.Resource[T, L] {
	r := rest.For[T, L](c, s.kind.gvr, s.kind.namespaced)
	if s.kind.namespaced {
		r = r.Namespace("default")
	}
	return r
}

func (s *subject[T, L]) label() string            { return s.kind.label }
func (s *subject[T, L]) run(ctx context.Context)  { s.inf.Run(ctx) }
func (s *subject[T, L]) connect(c *rest.Client)   { s.writer = s.accessor(c) }
func (s *subject[T, L]) journals() [2]*journal[T] { return [2]*journal[T]{s.resyncing, s.plain} }

func (s *subject[T, L]) nextValue() string {
	s.writes++
	return strconv.Itoa(s.writes)
}

func (s *subject[T, L]) create(name string) string {
	s.t.Helper()
	obj, err := s.writer.Create(context.Background(), s.kind.build(name, s.nextValue()), metav1.CreateOptions{})
	if err != nil {
		s.t.Fatalf("%s: create %s: %v", s.kind.label, name, err)
	}
	s.model[name] = obj
	return fmt.Sprintf("create %s/%s@%s", s.kind.label, name, obj.GetResourceVersion())
}

func (s *subject[T, L]) update(name string) string {
	s.t.Helper()
	obj, err := s.writer.Update(context.Background(), s.kind.withValue(s.model[name], s.nextValue()), metav1.UpdateOptions{})
	if err != nil {
		s.t.Fatalf("%s: update %s: %v", s.kind.label, name, err)
	}
	s.model[name] = obj
	return fmt.Sprintf("update %s/%s@%s", s.kind.label, name, obj.GetResourceVersion())
}

func (s *subject[T, L]) remove(name string) string {
	s.t.Helper()
	if err := s.writer.Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		s.t.Fatalf("%s: delete %s: %v", s.kind.label, name, err)
	}
	delete(s.model, name)
	if s.lost != nil {
		if _, ok := s.lost.start[name]; ok {
			s.lost.deleted[name] = true
		}
	}
	return fmt.Sprintf("delete %s/%s", s.kind.label, name)
}

func (s *subject[T, L]) write(rnd *rand.Rand) string {
	var absent, present []string
	for _, n := range chaosNames {
		_, ok := s.model[n]
		switch {
		case ok:
			present = append(present, n)
		case s.lost == nil || !s.lost.deleted[n]:
			absent = append(absent, n)
		}
	}
	p := rnd.IntN(100)
	switch {
	case len(absent) > 0 && (len(present) == 0 || p < 35):
		return s.create(absent[rnd.IntN(len(absent))])
	case len(present) > 0 && p < 70:
		return s.update(present[rnd.IntN(len(present))])
	case len(present) > 0:
		return s.remove(present[rnd.IntN(len(present))])
	}
	return s.update(fence)
}

func (s *subject[T, L]) churn(n int) {
	for range n {
		s.writeFence()
	}
}

func (s *subject[T, L]) writeFence() {
	if _, ok := s.model[fence]; ok {
		s.update(fence)
		return
	}
	s.create(fence)
}

// serverState lists the test objects on the server and checks them
// against the model: the server lost or invented nothing (across restarts
// too).
func (s *subject[T, L]) serverState() map[string]versioned {
	s.t.Helper()
	list, err := s.writer.List(context.Background(), metav1.ListOptions{LabelSelector: chaosSelector})
	if err != nil {
		s.t.Fatalf("%s: list from the server: %v", s.kind.label, err)
	}
	got := s.states(s.kind.items(list))
	if want := s.states(slices.Collect(maps.Values(s.model))); !maps.Equal(got, want) {
		s.t.Fatalf("%s: the server holds %v, but the test wrote %v", s.kind.label, got, want)
	}
	return got
}

func (s *subject[T, L]) settle() { s.serverState() }

func (s *subject[T, L]) states(objs []T) map[string]versioned {
	out := make(map[string]versioned, len(objs))
	for _, o := range objs {
		out[o.GetName()] = versioned{rv: rv(o), value: s.kind.value(o)}
	}
	return out
}

func (s *subject[T, L]) quiesce() {
	s.t.Helper()
	s.writeFence()
	want := s.serverState()
	var cached map[string]versioned
	var handed [2]map[string]versioned
	caughtUp := func() bool {
		cached = s.states(s.inf.Indexer().List())
		handed = [2]map[string]versioned{s.resyncing.state(), s.plain.state()}
		return maps.Equal(cached, want) && maps.Equal(handed[0], want) && maps.Equal(handed[1], want)
	}
	if err := testwait.Poll(s.t.Context(), waitFor, 2*time.Millisecond, testwait.Bool(caughtUp)); err != nil {
		s.t.Fatalf("%s: not caught up with the server: %v (reflector error: %v)\nserver:    %v\ncache:     %v\nresyncing: %v\nplain:     %v",
			s.kind.label, err, s.inf.LastError(), want, cached, handed[0], handed[1])
	}
}

func (s *subject[T, L]) beginLost() {
	start := map[string]uint64{}
	for n, o := range s.model {
		start[n] = rv(o)
	}
	s.lost = &lostPhase{start: start, deleted: map[string]bool{}, marks: [2]int{s.resyncing.mark(), s.plain.mark()}}
}

// endLost checks, once quiescent again, that each object deleted during
// the phase reached each handler as its first change since the start:
// a deletion with unknown final state carrying the start state. (A relist
// at the old version may first repeat the start state as an update; that
// is no change.)
func (s *subject[T, L]) endLost() {
	s.t.Helper()
	phase := s.lost
	s.lost = nil
	for k, j := range s.journals() {
		first := map[string]note{}
		for _, n := range j.since(phase.marks[k]) {
			if n.op == "resync" || n.op == "update" && n.rv == n.oldRV {
				continue // a repeat of the state the handler had
			}
			if _, ok := first[n.name]; !ok {
				first[n.name] = n
			}
		}
		for name := range phase.deleted {
			got, ok := first[name]
			want := note{op: "delete", name: name, rv: phase.start[name], unknown: true}
			if !ok || got.op != "delete" || !got.unknown || got.rv != want.rv {
				s.t.Errorf("%s: %s deleted while the watch was down: first notification %v, want %v", j.label, name, got, want)
			}
		}
	}
}

// resync steps the clock one period, with the informer quiescent: the
// resyncing handler gets every cached object once, at its cached state,
// and the plain handler nothing.
func (s *subject[T, L]) resync() {
	s.t.Helper()
	want := s.states(s.inf.Indexer().List())
	marks := [2]int{s.resyncing.mark(), s.plain.mark()}
	eventually(s.t, s.kind.label+" resync ticker", s.clock.HasWaiters)
	s.clock.Step(chaosResync)
	var got map[string]versioned
	replayed := func() bool {
		got = map[string]versioned{}
		for _, n := range s.resyncing.since(marks[0]) {
			if n.op != "resync" {
				s.t.Fatalf("%s: %v during a quiet resync", s.resyncing.label, n)
			}
			if _, dup := got[n.name]; dup {
				s.t.Fatalf("%s: %s resynced twice in one period", s.resyncing.label, n.name)
			}
			got[n.name] = versioned{rv: n.rv, value: n.value}
		}
		return len(got) >= len(want)
	}
	eventually(s.t, s.kind.label+" resync replay", replayed)
	if !maps.Equal(got, want) {
		s.t.Errorf("%s: resync replayed %v, cache holds %v", s.resyncing.label, got, want)
	}
	if extra := s.plain.since(marks[1]); len(extra) > 0 {
		s.t.Errorf("%s: got %v during another handler's resync", s.plain.label, extra)
	}
}

// finish reports the journals' rule violations and checks that both
// handlers were handed the same notifications, resyncs aside.
func (s *subject[T, L]) finish() {
	s.t.Helper()
	for _, j := range s.journals() {
		problems := j.violations()
		for _, p := range problems {
			s.t.Error(p)
		}
		if len(problems) > 0 {
			s.t.Logf("%s: the notifications were:\n%v", j.label, j.since(0))
		}
	}
	a, b := s.resyncing.withoutResyncs(), s.plain.withoutResyncs()
	if !slices.Equal(a, b) {
		s.t.Errorf("%s: the handlers were handed different notifications:\nresyncing: %v\nplain:     %v", s.kind.label, a, b)
	}
}
