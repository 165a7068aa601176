package clientgo

import (
	"fmt"
	"sync"
	"testing"

	spcache "github.com/setpoint-dev/setpoint/cache"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	cgcache "k8s.io/client-go/tools/cache"
)

// The indexer benchmarks file benchPods pods over benchNamespaces
// namespaces and benchNodes nodes, and compare setpoint's cache with
// client-go's cache.NewIndexer on identical inputs and index functions.
const (
	benchPods       = 100_000
	benchNamespaces = 100
	benchNodes      = 1_000
	byNode          = "node"
)

func makePods(n int, nodeShift int) []*corev1.Pod {
	pods := make([]*corev1.Pod, n)
	for i := range pods {
		pods[i] = &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Namespace: fmt.Sprintf("ns-%d", i%benchNamespaces),
				Name:      fmt.Sprintf("pod-%d", i),
				UID:       "uid",
				Labels:    map[string]string{"app": fmt.Sprintf("app-%d", i%10)},
			},
			Spec: corev1.PodSpec{NodeName: fmt.Sprintf("node-%d", (i+nodeShift)%benchNodes)},
		}
	}
	return pods
}

var benchPodSet = sync.OnceValue(func() []*corev1.Pod { return makePods(benchPods, 0) })

// movedPodSet holds the same pods as benchPodSet, each on another node.
var movedPodSet = sync.OnceValue(func() []*corev1.Pod { return makePods(benchPods, 1) })

func spNodeIndex(p *corev1.Pod) ([]string, error) { return []string{p.Spec.NodeName}, nil }

func cgNodeIndex(obj any) ([]string, error) {
	return []string{obj.(*corev1.Pod).Spec.NodeName}, nil
}

// indexer is the part of both indexers the benchmarks drive.
type indexer interface {
	add(p *corev1.Pod) error
	update(p *corev1.Pod) error
	byIndex(index, value string) (int, error)
}

type setpointIndexer struct {
	s *spcache.ThreadSafeIndexer[*corev1.Pod]
}

func newSetpoint() indexer {
	return setpointIndexer{spcache.NewObjectIndexer(spcache.Indexers[*corev1.Pod]{byNode: spNodeIndex})}
}

func (x setpointIndexer) add(p *corev1.Pod) error    { return x.s.Add(p) }
func (x setpointIndexer) update(p *corev1.Pod) error { return x.s.Update(p) }
func (x setpointIndexer) byIndex(index, value string) (int, error) {
	objs, err := x.s.ByIndex(index, value)
	return len(objs), err
}

type clientGoIndexer struct {
	s cgcache.Indexer
}

func newClientGo() indexer {
	return clientGoIndexer{cgcache.NewIndexer(cgcache.MetaNamespaceKeyFunc, cgcache.Indexers{
		cgcache.NamespaceIndex: cgcache.MetaNamespaceIndexFunc,
		byNode:                 cgNodeIndex,
	})}
}

func (x clientGoIndexer) add(p *corev1.Pod) error    { return x.s.Add(p) }
func (x clientGoIndexer) update(p *corev1.Pod) error { return x.s.Update(p) }
func (x clientGoIndexer) byIndex(index, value string) (int, error) {
	objs, err := x.s.ByIndex(index, value)
	return len(objs), err
}

var implementations = []struct {
	name string
	make func() indexer
}{
	{"setpoint", newSetpoint},
	{"client-go", newClientGo},
}

func filled(b *testing.B, make func() indexer) indexer {
	b.Helper()
	x := make()
	for _, p := range benchPodSet() {
		if err := x.add(p); err != nil {
			b.Fatal(err)
		}
	}
	return x
}

// BenchmarkIndexerByIndex looks up one namespace (1,000 pods) or one node
// (100 pods) among 100,000 pods.
func BenchmarkIndexerByIndex(b *testing.B) {
	lookups := []struct {
		name, index string
		value       func(i int) string
		want        int
	}{
		{"namespace", cgcache.NamespaceIndex, func(i int) string { return fmt.Sprintf("ns-%d", i%benchNamespaces) }, benchPods / benchNamespaces},
		{"node", byNode, func(i int) string { return fmt.Sprintf("node-%d", i%benchNodes) }, benchPods / benchNodes},
	}
	for _, l := range lookups {
		values := make([]string, 64)
		for i := range values {
			values[i] = l.value(i * 7)
		}
		b.Run(l.name, func(b *testing.B) {
			for _, impl := range implementations {
				b.Run(impl.name, func(b *testing.B) {
					x := filled(b, impl.make)
					b.ReportAllocs()
					b.ResetTimer()
					for i := 0; b.Loop(); i++ {
						n, err := x.byIndex(l.index, values[i%len(values)])
						if err != nil || n != l.want {
							b.Fatalf("ByIndex = %d, %v; want %d", n, err, l.want)
						}
					}
				})
			}
		})
	}
}

// BenchmarkIndexerAdd adds new pods to an indexer, starting over with an
// empty one every 100,000 adds.
func BenchmarkIndexerAdd(b *testing.B) {
	pods := benchPodSet()
	for _, impl := range implementations {
		b.Run(impl.name, func(b *testing.B) {
			x := impl.make()
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if i%len(pods) == 0 && i > 0 {
					b.StopTimer()
					x = impl.make()
					b.StartTimer()
				}
				if err := x.add(pods[i%len(pods)]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkIndexerUpdate updates pods of a full indexer, each update moving
// the pod to another node so the node index changes every time.
func BenchmarkIndexerUpdate(b *testing.B) {
	versions := [2][]*corev1.Pod{movedPodSet(), benchPodSet()}
	for _, impl := range implementations {
		b.Run(impl.name, func(b *testing.B) {
			x := filled(b, impl.make)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				pods := versions[(i/benchPods)%2]
				if err := x.update(pods[i%benchPods]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
