package bench

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/setpoint-dev/setpoint/controller"
	"github.com/setpoint-dev/setpoint/handler"
	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/reconcile"
	"github.com/setpoint-dev/setpoint/rest"
	"github.com/setpoint-dev/setpoint/sharding"
)

// Shape of BenchmarkShardedReconcile.
const (
	shardBenchObjects    = 2000
	shardBenchNamespaces = 50
	shardBenchWorkers    = 4
	// shardBenchCost is the reconciler's simulated I/O (an API call's
	// latency): what sharding spreads over replicas.
	shardBenchCost   = 2 * time.Millisecond
	shardBenchWindow = 3 * time.Second
)

// BenchmarkShardedReconcile: reconciles per second of a cheap reconciler
// (a cache read and 2 ms of simulated I/O, 4 workers per replica) that
// keeps every one of 2,000 ConfigMaps in 50 namespaces busy, with 1, 2 and
// 4 sharded replicas (32 shards) in this process, measured over a 3 s
// window once the replicas hold their fair shares. One iteration per
// sub-benchmark is enough (-benchtime=1x).
//
//	go test -run '^$' -bench ShardedReconcile -benchtime=1x ./bench/
func BenchmarkShardedReconcile(b *testing.B) {
	srv := testserver.Start(b, testserver.Options{})
	cfg := srv.RESTConfig(b)
	shardBenchFill(b, srv.RESTClient(b))
	for _, n := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("replicas=%d", n), func(b *testing.B) {
			for range b.N {
				rate := shardBenchRun(b, cfg, n)
				b.ReportMetric(rate, "reconciles/s")
			}
		})
	}
}

func shardBenchFill(b *testing.B, c *rest.Client) {
	ctx := context.Background()
	nss := rest.For[*corev1.Namespace, *corev1.NamespaceList](c, corev1.SchemeGroupVersion.WithResource("namespaces"), false)
	cms := rest.For[*corev1.ConfigMap, *corev1.ConfigMapList](c, corev1.SchemeGroupVersion.WithResource("configmaps"), true)
	for i := range shardBenchNamespaces {
		ns := fmt.Sprintf("shard-bench-%d", i)
		if _, err := nss.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
		for k := range shardBenchObjects / shardBenchNamespaces {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("cm-%d", k)}}
			if _, err := cms.Namespace(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// shardBenchReplica is one replica: a manager, its Sharder and a
// controller whose reconciler counts into count.
type shardBenchReplica struct {
	s    *sharding.Sharder
	stop func()
}

// shardBenchRun starts n replicas of a fresh group, waits for the fair
// shares, and returns the reconciles per second over the window.
func shardBenchRun(b *testing.B, cfg *rest.Config, n int) float64 {
	var count atomic.Int64
	group := fmt.Sprintf("bench-%d-%d", n, time.Now().UnixNano())
	var rs []*shardBenchReplica
	for i := range n {
		rs = append(rs, shardBenchStart(b, cfg, group, fmt.Sprintf("r%d", i), &count))
	}
	defer func() {
		for _, r := range rs {
			r.stop()
		}
	}()
	deadline := time.Now().Add(60 * time.Second)
	for !shardBenchBalanced(rs) {
		if time.Now().After(deadline) {
			b.Fatal("replicas did not reach their fair shares")
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(time.Second) // let the resync backlog clear
	b.ResetTimer()
	start, before := time.Now(), count.Load()
	time.Sleep(shardBenchWindow)
	done, took := count.Load()-before, time.Since(start)
	b.StopTimer()
	return float64(done) / took.Seconds()
}

// shardBenchBalanced: every shard owned once, each replica at most its
// fair share.
func shardBenchBalanced(rs []*shardBenchReplica) bool {
	seen := map[int]bool{}
	fair := (sharding.DefaultShards + len(rs) - 1) / len(rs)
	for _, r := range rs {
		owned := r.s.Owned()
		if len(owned) > fair {
			return false
		}
		for _, i := range owned {
			if seen[i] {
				return false
			}
			seen[i] = true
		}
	}
	return len(seen) == sharding.DefaultShards
}

func shardBenchStart(b *testing.B, cfg *rest.Config, group, id string, count *atomic.Int64) *shardBenchReplica {
	mgr, err := manager.New(manager.Options{Config: cfg, MetricsAddr: "0", HealthAddr: "0",
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	s, err := sharding.New(sharding.Options{Client: mgr.Client(), Name: group, Namespace: "default", Identity: id,
		LeaseDuration: 3 * time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: 250 * time.Millisecond,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	inf := manager.InformerFor[*corev1.ConfigMap](mgr, corev1.SchemeGroupVersion.WithResource("configmaps"), true)
	r := reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		if _, err := inf.Lister().Namespace(req.Namespace).Get(req.Name); err != nil {
			return reconcile.Result{}, nil
		}
		select {
		case <-time.After(shardBenchCost):
		case <-ctx.Done():
		}
		count.Add(1)
		return reconcile.Result{RequeueAfter: time.Millisecond}, nil
	})
	copts := mgr.ControllerOptions()
	copts.MaxConcurrentReconciles = shardBenchWorkers
	ctrl, err := controller.New("bench", s.Reconciler(r), copts)
	if err != nil {
		b.Fatal(err)
	}
	if err := ctrl.Watch(s.Source(controller.Kind(inf, "v1 configmaps", handler.Object[*corev1.ConfigMap]()))); err != nil {
		b.Fatal(err)
	}
	s.Resync(ctrl.Queue(), func() []reconcile.Request {
		cms, _ := inf.Lister().List(labels.Everything())
		out := make([]reconcile.Request, 0, len(cms))
		for _, cm := range cms {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: cm.Namespace, Name: cm.Name}})
		}
		return out
	})
	for _, run := range []manager.Runnable{s, sharding.EveryReplica(ctrl)} {
		if err := mgr.Add(run); err != nil {
			b.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = mgr.Start(ctx) }()
	return &shardBenchReplica{s: s, stop: func() { cancel(); <-done; mgr.Client().CloseIdleConnections() }}
}
