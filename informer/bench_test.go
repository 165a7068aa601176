package informer

import (
	"fmt"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// countingHandler counts callbacks.
type countingHandler struct{ n atomic.Int64 }

func (c *countingHandler) OnAdd(*corev1.ConfigMap, bool)    { c.n.Add(1) }
func (c *countingHandler) OnUpdate(_, _ *corev1.ConfigMap)  { c.n.Add(1) }
func (c *countingHandler) OnDelete(*corev1.ConfigMap, bool) { c.n.Add(1) }
func (c *countingHandler) waitFor(target int64) {
	for c.n.Load() < target {
		waitABit()
	}
}

// BenchmarkDispatch measures one watch event from the sink to the
// callbacks of two handlers: transform, queue, store update, hand-over and
// delivery. Objects rotate over 1000 keys, so the store stays that size.
func BenchmarkDispatch(b *testing.B) {
	inf := newInformer(Options[*corev1.ConfigMap]{})
	h1, h2 := &countingHandler{}, &countingHandler{}
	for _, h := range []*countingHandler{h1, h2} {
		if _, err := inf.AddEventHandler(h, HandlerOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	objs := make([]*corev1.ConfigMap, 1000)
	for k := range objs {
		objs[k] = configMap(fmt.Sprintf("cm-%d", k), "1")
	}
	defer runUntilStopped(inf)()
	if err := inf.sink.Replace(objs, "1"); err != nil {
		b.Fatal(err)
	}
	base := int64(len(objs))
	h1.waitFor(base)
	h2.waitFor(base)
	b.ReportAllocs()
	b.ResetTimer()
	for k := 0; k < b.N; k++ {
		if err := inf.sink.Update(objs[k%len(objs)]); err != nil {
			b.Fatal(err)
		}
	}
	h1.waitFor(base + int64(b.N))
	h2.waitFor(base + int64(b.N))
}
