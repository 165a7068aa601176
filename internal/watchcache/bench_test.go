package watchcache

import (
	"context"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
)

// benchWatchers is the fan-out of the dispatch benchmarks.
const benchWatchers = 1000

// benchScenario says how the watchers of a benchmark are spread.
type benchScenario struct {
	name string
	opts func(t testing.TB, i int) WatchOptions
}

var benchScenarios = []benchScenario{
	// Every watcher receives every event.
	{"all-namespaces", func(testing.TB, int) WatchOptions { return WatchOptions{Mode: InitialEvents} }},
	// Every watcher evaluates its selector; half receive the event.
	{"label-selector", func(t testing.TB, i int) WatchOptions {
		app := "web"
		if i%2 == 1 {
			app = "db"
		}
		return WatchOptions{Mode: InitialEvents, Label: labels.SelectorFromSet(labels.Set{"app": app})}
	}},
	// Watchers spread over 100 namespaces; the index skips 990 of them.
	{"namespaced", func(t testing.TB, i int) WatchOptions {
		return WatchOptions{Mode: InitialEvents, Namespace: "ns" + strconv.Itoa(i%100)}
	}},
}

// openBenchWatchers opens the watchers and drains their initial events.
func openBenchWatchers(b *testing.B, e *env, sc benchScenario) []*Watcher {
	ws := make([]*Watcher, benchWatchers)
	for i := range ws {
		ws[i] = e.watch(sc.opts(b, i))
	}
	drain(ws)
	return ws
}

func drain(ws []*Watcher) {
	for _, w := range ws {
		for _, ok, _ := w.q.tryPop(); ok; _, ok, _ = w.q.tryPop() {
		}
	}
}

// BenchmarkDispatch measures the cache's share of one update: apply it to
// the state and the window and dispatch it to 1,000 watchers (frames are
// encoded lazily, by the readers, so not here).
func BenchmarkDispatch(b *testing.B) {
	for _, sc := range benchScenarios {
		b.Run(sc.name, func(b *testing.B) {
			e := newEnv(b, configMaps, func(c *Config) { c.WatcherBuffer = 128 }, func(e *env) {
				e.create(cmKey("ns0", "k"), configMap("ns0", "k", map[string]string{"app": "web"}, "0"))
			})
			ws := openBenchWatchers(b, e, sc)
			c := e.cache
			kv, err := e.store.Get(context.Background(), cmKey("ns0", "k"))
			if err != nil {
				b.Fatal(err)
			}
			proto, err := c.newObject(kv)
			if err != nil {
				b.Fatal(err)
			}
			prev := proto
			rev := c.Revision()
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				if i%100 == 99 {
					b.StopTimer()
					drain(ws)
					b.StartTimer()
				}
				rev++
				cur := &object{key: proto.key, namespace: proto.namespace, obj: proto.obj,
					labels: proto.labels, fields: proto.fields, rev: rev, createRev: proto.createRev}
				c.advance(rev, &event{rev: rev, cur: cur, prev: prev})
				prev = cur
			}
			b.StopTimer()
			if m := c.Metrics(); m.WatchersTooSlow != 0 {
				b.Fatalf("watchers ended as too slow: %+v", m)
			}
		})
	}
}

// BenchmarkUpdateFanout measures one update end to end: the store write,
// the cache decoding and dispatching it, and 1,000 watchers receiving it
// (the first one also encodes the shared frame).
func BenchmarkUpdateFanout(b *testing.B) {
	e := newEnv(b, configMaps, nil, func(e *env) {
		e.create(cmKey("ns0", "k"), configMap("ns0", "k", map[string]string{"app": "web"}, "0"))
	})
	ws := openBenchWatchers(b, e, benchScenarios[0])
	obj := e.encode(configMap("ns0", "k", map[string]string{"app": "web"}, "1"))
	rev := e.storeRev()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		var err error
		rev, err = e.store.Update(context.Background(), cmKey("ns0", "k"), obj, rev)
		if err != nil {
			b.Fatal(err)
		}
		for i, w := range ws {
			f := recv(w)
			if i == 0 {
				if _, err := f.Bytes(); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
}

// BenchmarkDispatchByNode measures what one pod update costs the cache when
// each of 100 nodes watches its own pods (spec.nodeName=NODE, as every
// simulated node and kubelet does) plus 5 cluster-wide watchers (the
// controllers): with the trigger index the event visits one node's
// watcher, without it every node's selector is evaluated.
func BenchmarkDispatchByNode(b *testing.B) {
	for _, indexed := range []bool{false, true} {
		b.Run("indexed="+strconv.FormatBool(indexed), func(b *testing.B) {
			const nodes = 100
			e := newEnv(b, pods, func(c *Config) {
				c.WatcherBuffer = 128
				if indexed {
					c.IndexFields = []string{"spec.nodeName"}
				}
			}, nil)
			var ws []*Watcher
			for i := range nodes {
				ws = append(ws, e.watch(WatchOptions{Mode: FromRevision, ResourceVersion: e.cache.Revision(),
					Field: fields.OneTermEqualSelector("spec.nodeName", "node-"+strconv.Itoa(i))}))
			}
			for range 5 {
				ws = append(ws, e.watch(WatchOptions{Mode: FromRevision, ResourceVersion: e.cache.Revision()}))
			}
			c := e.cache
			pod := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
				ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "p", Labels: map[string]string{"app": "web"}},
				Spec:       corev1.PodSpec{NodeName: "node-7"}}
			ls, fs, err := pods.attrs(pod)
			if err != nil {
				b.Fatal(err)
			}
			proto := &object{key: podPrefix + "default/p", namespace: "default", obj: pod, labels: ls, fields: fs}
			prev := proto
			rev := c.Revision()
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				if i%100 == 99 {
					b.StopTimer()
					drain(ws)
					b.StartTimer()
				}
				rev++
				cur := &object{key: proto.key, namespace: proto.namespace, obj: proto.obj,
					labels: proto.labels, fields: proto.fields, rev: rev}
				c.advance(rev, &event{rev: rev, cur: cur, prev: prev})
				prev = cur
			}
			b.StopTimer()
			if m := c.Metrics(); m.WatchersTooSlow != 0 {
				b.Fatalf("watchers ended as too slow: %+v", m)
			}
		})
	}
}
