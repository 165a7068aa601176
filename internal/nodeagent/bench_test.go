package nodeagent_test

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"

	"github.com/setpoint-dev/setpoint/internal/nodeagent"
	"github.com/setpoint-dev/setpoint/internal/testserver"
)

// BenchmarkRunBoundPods measures how long one agent simulating 100 nodes
// takes from its start to all of 10,000 already bound pods Running, against
// an in-process server (memory storage), with the kubelet events on and
// off, and with the nodes reading and writing as the manager (admin) or
// each as itself (system:node:NAME, client certificates, as setpoint up
// runs them). It also reports the process's goroutines and live heap once
// all pods run (server included: it is in process). Run with
// -benchtime=1x.
func BenchmarkRunBoundPods(b *testing.B) {
	for _, identity := range []string{"admin", "node"} {
		for _, events := range []bool{true, false} {
			b.Run(fmt.Sprintf("identity=%s/events=%v", identity, events), func(b *testing.B) {
				benchRunBoundPods(b, !events, identity == "node")
			})
		}
	}
}

func benchRunBoundPods(b *testing.B, noEvents, asNodes bool) {
	const nodes, pods = 100, 10000
	for range b.N {
		b.StopTimer()
		srv := testserver.Start(b, testserver.Options{})
		e := newEnv(b, srv)
		createBoundPods(b, e, nodes, pods)
		mgr := newManager(b, srv)
		opts := nodeagent.Options{Count: nodes, Clock: clock.RealClock{}, DisableEvents: noEvents}
		if asNodes {
			opts.NodeCredentials = nodeCredentials(b, srv)
		}
		if _, err := nodeagent.New(mgr, opts); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		run(b, mgr)
		for {
			l, err := e.pods.Namespace("").List(ctx(), metav1.ListOptions{FieldSelector: "status.phase!=Running", Limit: 1})
			if err != nil {
				b.Fatal(err)
			}
			if len(l.Items) == 0 {
				break
			}
			if time.Since(start) > 5*time.Minute {
				b.Fatal("pods not running after 5 minutes")
			}
			time.Sleep(20 * time.Millisecond)
		}
		elapsed := time.Since(start)
		b.StopTimer()
		b.ReportMetric(float64(pods)/elapsed.Seconds(), "pods/s")
		b.ReportMetric(elapsed.Seconds(), "s-to-all-running")
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		b.ReportMetric(float64(runtime.NumGoroutine()), "goroutines")
		b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-MiB")
		srv.Stop(b)
	}
}

// createBoundPods creates n pods already assigned round-robin to the nodes.
func createBoundPods(b *testing.B, e *env, nodes, n int) {
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Value
	for range 32 {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				p := newPod(fmt.Sprintf("p-%05d", i), corev1.RestartPolicyAlways, "app=nginx:1.27")
				p.Spec.NodeName = fmt.Sprintf("node-%d", i%nodes)
				if _, err := e.pods.Namespace("default").Create(ctx(), p, metav1.CreateOptions{}); err != nil {
					failed.Store(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err, ok := failed.Load().(error); ok {
		b.Fatal(err)
	}
}
