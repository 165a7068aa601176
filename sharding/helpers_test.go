package sharding_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/setpoint-dev/setpoint/controller"
	"github.com/setpoint-dev/setpoint/handler"
	"github.com/setpoint-dev/setpoint/informer"
	"github.com/setpoint-dev/setpoint/internal/tcpproxy"
	"github.com/setpoint-dev/setpoint/internal/testwait"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/reconcile"
	"github.com/setpoint-dev/setpoint/rest"
	"github.com/setpoint-dev/setpoint/sharding"
)

// Test timings: short, with the same ratios as the defaults' order.
const (
	shards        = 8
	leaseDuration = 3 * time.Second
	renewDeadline = 2 * time.Second
	retryPeriod   = 250 * time.Millisecond
)

var cmGVR = corev1.SchemeGroupVersion.WithResource("configmaps")

func testLogger() *slog.Logger {
	if os.Getenv("SHARDING_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

// span is one reconcile: which replica, which key, the value of the
// object's data["v"] it saw, and when it ran (monotonic, one process).
type span struct {
	replica, key, value string
	start, end          time.Time
}

// journal collects the spans of every replica.
type journal struct {
	mu    sync.Mutex
	spans []span
}

func (j *journal) add(s span) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.spans = append(j.spans, s)
}

// sawValue reports whether some replica reconciled key after it had value v.
func (j *journal) sawValue(key, v string) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, s := range j.spans {
		if s.key == key && s.value == v {
			return true
		}
	}
	return false
}

func (j *journal) count(replica string) int {
	j.mu.Lock()
	defer j.mu.Unlock()
	n := 0
	for _, s := range j.spans {
		if s.replica == replica {
			n++
		}
	}
	return n
}

// checkExclusive fails the test if two replicas' spans of one key overlap.
func (j *journal) checkExclusive(t *testing.T) {
	t.Helper()
	j.mu.Lock()
	defer j.mu.Unlock()
	byKey := map[string][]span{}
	for _, s := range j.spans {
		byKey[s.key] = append(byKey[s.key], s)
	}
	bad := 0
	for key, ss := range byKey {
		sort.Slice(ss, func(a, b int) bool { return ss[a].start.Before(ss[b].start) })
		var last span // the span ending latest so far
		for i, s := range ss {
			if i > 0 && s.replica != last.replica && s.start.Before(last.end) {
				bad++
				if bad < 10 {
					t.Errorf("%s reconciled by %s from %v while %s reconciled it until %v", key, s.replica,
						s.start.Format("15:04:05.000"), last.replica, last.end.Format("15:04:05.000"))
				}
			}
			if i == 0 || s.end.After(last.end) {
				last = s
			}
		}
	}
	t.Logf("checked %d spans over %d keys: %d overlaps", len(j.spans), len(byKey), bad)
}

// recorder is the replicas' reconciler: it reads the object from its
// informer, takes a few milliseconds (ending early if ctx ends), records the
// span and asks to run again soon, so that every replica keeps reconciling
// the keys it owns.
type recorder struct {
	id  string
	inf *informer.Informer[*corev1.ConfigMap]
	j   *journal
}

func (r *recorder) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	start := time.Now()
	cm, err := r.inf.Lister().Namespace(req.Namespace).Get(req.Name)
	if err != nil {
		return reconcile.Result{}, nil
	}
	v := cm.Data["v"]
	select {
	case <-time.After(time.Duration(2+start.UnixNano()%8) * time.Millisecond):
	case <-ctx.Done():
	}
	r.j.add(span{replica: r.id, key: req.String(), value: v, start: start, end: time.Now()})
	return reconcile.Result{RequeueAfter: 300 * time.Millisecond}, nil
}

// replica is one running member of the group, reaching the API server
// through its own proxy so that a test can cut it off.
type replica struct {
	id     string
	s      *sharding.Sharder
	proxy  *tcpproxy.Proxy
	cancel context.CancelFunc
	done   chan error
}

func startReplica(t *testing.T, cfg *rest.Config, id string, j *journal) *replica {
	t.Helper()
	p := tcpproxy.New(t, cfg.Host)
	c := *cfg
	c.Host = "https://" + p.Addr()
	c.MaxRetries = -1
	mgr, err := manager.New(manager.Options{Config: &c, MetricsAddr: "0", HealthAddr: "0", Logger: testLogger(),
		GracefulShutdownTimeout: -1})
	if err != nil {
		t.Fatal(err)
	}
	s, err := sharding.New(sharding.Options{Client: mgr.Client(), Name: "test", Namespace: "default", Identity: id,
		Shards: shards, LeaseDuration: leaseDuration, RenewDeadline: renewDeadline, RetryPeriod: retryPeriod,
		Logger: testLogger().With("replica", id)})
	if err != nil {
		t.Fatal(err)
	}
	inf := manager.InformerFor[*corev1.ConfigMap](mgr, cmGVR, true)
	ctrl, err := controller.New("configmaps-"+id, s.Reconciler(&recorder{id: id, inf: inf, j: j}), mgr.ControllerOptions())
	if err != nil {
		t.Fatal(err)
	}
	if err := ctrl.Watch(s.Source(controller.Kind(inf, "v1 configmaps", handler.Object[*corev1.ConfigMap]()))); err != nil {
		t.Fatal(err)
	}
	s.Resync(ctrl.Queue(), func() []reconcile.Request {
		cms, _ := inf.Lister().List(labels.Everything())
		reqs := make([]reconcile.Request, 0, len(cms))
		for _, cm := range cms {
			reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: cm.Namespace, Name: cm.Name}})
		}
		return reqs
	})
	for _, r := range []manager.Runnable{s, sharding.EveryReplica(ctrl)} {
		if err := mgr.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &replica{id: id, s: s, proxy: p, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- mgr.Start(ctx) }()
	t.Cleanup(func() { r.stop(t) })
	t.Cleanup(mgr.Client().CloseIdleConnections)
	return r
}

// stop cancels the replica and waits for its manager (idempotent).
func (r *replica) stop(t *testing.T) {
	t.Helper()
	r.cancel()
	select {
	case err, ok := <-r.done:
		if ok {
			close(r.done)
			if err != nil {
				t.Logf("replica %s: %v", r.id, err)
			}
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("replica %s did not stop", r.id)
	}
}

// eventually polls cond every 50 ms until it holds or timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	return testwait.UntilEvery(t, timeout, 50*time.Millisecond, what, testwait.Bool(cond))
}

// partition reports whether the replicas' owned shards are disjoint and
// cover every shard.
func partition(rs ...*replica) bool {
	seen := map[int]bool{}
	for _, r := range rs {
		for _, i := range r.s.Owned() {
			if seen[i] {
				return false
			}
			seen[i] = true
		}
	}
	return len(seen) == shards
}

// fixture creates namespaces ns-0..ns-(nns-1) with per configmaps each.
func fixture(t *testing.T, c *rest.Client, nns, per int) []types.NamespacedName {
	t.Helper()
	ctx := context.Background()
	nss := rest.For[*corev1.Namespace, *corev1.NamespaceList](c, corev1.SchemeGroupVersion.WithResource("namespaces"), false)
	cms := rest.For[*corev1.ConfigMap, *corev1.ConfigMapList](c, cmGVR, true)
	var keys []types.NamespacedName
	for i := range nns {
		ns := fmt.Sprintf("ns-%d", i)
		if _, err := nss.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		for k := range per {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("cm-%d", k)},
				Data: map[string]string{"v": "0"}}
			if _, err := cms.Namespace(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			keys = append(keys, types.NamespacedName{Namespace: ns, Name: cm.Name})
		}
	}
	return keys
}

// setAll writes data["v"] = v on every key.
func setAll(t *testing.T, c *rest.Client, keys []types.NamespacedName, v string) {
	t.Helper()
	cms := rest.For[*corev1.ConfigMap, *corev1.ConfigMapList](c, cmGVR, true)
	for _, k := range keys {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: k.Namespace, Name: k.Name}, Data: map[string]string{"v": v}}
		if _, err := cms.Namespace(k.Namespace).Update(context.Background(), cm, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}
