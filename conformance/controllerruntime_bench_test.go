package conformance

import (
	"context"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/setpoint-dev/setpoint/testenv"
)

// BenchmarkControllerRuntimeTestEnvStart is the time from testenv.Start
// to a controller-runtime manager's cache synced — the moment an
// envtest-style test can start: the environment starts, its kubeconfig is
// loaded with clientcmd, a manager is built with a controller
// (For Deployment, Owns ReplicaSet) and a ConfigMap informer, started, and
// its cache waited for. ns/op is that time (stop excluded);
// ms-to-ready is testenv.Start alone; ms-to-synced the whole.
//
//	cd conformance && go test -run '^$' -bench ControllerRuntimeTestEnvStart -benchtime 20x .
func BenchmarkControllerRuntimeTestEnvStart(b *testing.B) {
	for _, tc := range []struct {
		name string
		opts testenv.Options
	}{
		{"apiserver", testenv.Options{}},
		{"controllers", testenv.Options{Controllers: true}},
		{"cluster-3-nodes", testenv.Options{Nodes: 3}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var ready, synced time.Duration
			for i := 0; i < b.N; i++ {
				start := time.Now()
				env, err := testenv.Start(tc.opts)
				if err != nil {
					b.Fatal(err)
				}
				ready += time.Since(start)
				run, mgr := crBenchManager(b, env)
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				if !mgr.GetCache().WaitForCacheSync(ctx) {
					b.Fatal("cache did not sync")
				}
				cancel()
				synced += time.Since(start)

				b.StopTimer()
				if err := run.stop(); err != nil {
					b.Fatal(err)
				}
				if err := env.Stop(); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(ready.Microseconds())/1000/float64(b.N), "ms-to-ready")
			b.ReportMetric(float64(synced.Microseconds())/1000/float64(b.N), "ms-to-synced")
		})
	}
}

// crBenchManager builds and starts what a typical envtest suite starts.
func crBenchManager(b *testing.B, env *testenv.Environment) (*crRunning, ctrl.Manager) {
	mgr, err := ctrl.NewManager(crRestConfig(b, env.Kubeconfig), crManagerOptions(b))
	if err != nil {
		b.Fatal(err)
	}
	noop := reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) { return reconcile.Result{}, nil })
	if err := ctrl.NewControllerManagedBy(mgr).Named("bench").For(&appsv1.Deployment{}).Owns(&appsv1.ReplicaSet{}).Complete(noop); err != nil {
		b.Fatal(err)
	}
	// Informers asked for before Start are started with the cache and
	// waited for by WaitForCacheSync.
	for _, obj := range []client.Object{&appsv1.Deployment{}, &appsv1.ReplicaSet{}, &corev1.ConfigMap{}} {
		if _, err := mgr.GetCache().GetInformer(context.Background(), obj); err != nil {
			b.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &crRunning{cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- mgr.Start(ctx) }()
	return r, mgr
}
