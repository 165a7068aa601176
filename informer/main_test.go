package informer

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/internal/testwait"
	"github.com/setpoint-dev/setpoint/rest"
)

// TestMain fails the package if a test leaves a goroutine behind:
// reflectors, dispatchers, handler and resync goroutines must all stop.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// waitFor bounds every wait for something asynchronous; it is a safety
// net against hangs, never a measurement.
const waitFor = 30 * time.Second

// countingTransport counts the requests sent to the server.
type countingTransport struct {
	base http.RoundTripper
	n    atomic.Int64
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.base.RoundTrip(r)
}

// start runs a real API server and returns a client built from its
// kubeconfig, whose requests are counted.
func start(t *testing.T) (*testserver.Server, *rest.Client, *countingTransport) {
	t.Helper()
	srv := testserver.Start(t, testserver.Options{})
	cfg := srv.RESTConfig(t)
	counter := &countingTransport{base: srv.Client.Transport}
	cfg.Transport = counter
	c, err := rest.New(cfg)
	if err != nil {
		t.Fatalf("new client: %v", err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return srv, c, counter
}

var cmGVR = corev1.SchemeGroupVersion.WithResource("configmaps")

func configMaps(c *rest.Client) *rest.Resource[*corev1.ConfigMap, *corev1.ConfigMapList] {
	return rest.For[*corev1.ConfigMap, *corev1.ConfigMapList](c, cmGVR, true).Namespace("default")
}

func configMap(name string, data string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Data:       map[string]string{"v": data},
	}
}

// recorder is a Handler that writes one line per callback to a channel, so
// tests can read a handler's notifications in delivery order.
type recorder[T metav1.Object] struct {
	events chan string
	// entered, when set, gets a value as every callback begins.
	entered chan struct{}
	// block, when set, is received from before every callback: the
	// handler is as slow as the test wants.
	block chan struct{}
}

func newRecorder[T metav1.Object]() *recorder[T] {
	return &recorder[T]{events: make(chan string, 10000)}
}

func (r *recorder[T]) wait() {
	if r.entered != nil {
		r.entered <- struct{}{}
	}
	if r.block != nil {
		<-r.block
	}
}

func (r *recorder[T]) OnAdd(obj T, initial bool) {
	r.wait()
	r.events <- fmt.Sprintf("add %s initial=%v", key(obj), initial)
}

func (r *recorder[T]) OnUpdate(oldObj, newObj T) {
	r.wait()
	if any(oldObj) == any(newObj) {
		r.events <- fmt.Sprintf("resync %s", key(newObj))
		return
	}
	r.events <- fmt.Sprintf("update %s %s", key(newObj), data(newObj))
}

func (r *recorder[T]) OnDelete(obj T, unknown bool) {
	r.wait()
	r.events <- fmt.Sprintf("delete %s unknown=%v", key(obj), unknown)
}

func key(obj metav1.Object) string { return obj.GetNamespace() + "/" + obj.GetName() }

// data is the "v" entry of a ConfigMap, "" for other objects.
func data(obj metav1.Object) string {
	if cm, ok := obj.(*corev1.ConfigMap); ok {
		return cm.Data["v"]
	}
	return ""
}

// expect reads the recorder's next len(want) lines and compares them in
// order.
func (r *recorder[T]) expect(t *testing.T, want ...string) {
	t.Helper()
	for k, w := range want {
		select {
		case got := <-r.events:
			if got != w {
				t.Fatalf("notification %d: got %q, want %q", k, got, w)
			}
		case <-time.After(waitFor):
			t.Fatalf("notification %d: timed out waiting for %q", k, w)
		}
	}
}

// expectSet reads len(want) lines and compares them ignoring order (the
// order of a list's items is the server's, not under test).
func (r *recorder[T]) expectSet(t *testing.T, want ...string) {
	t.Helper()
	left := map[string]int{}
	for _, w := range want {
		left[w]++
	}
	for range want {
		select {
		case got := <-r.events:
			if left[got] == 0 {
				t.Fatalf("unexpected notification %q; still waiting for %v", got, left)
			}
			left[got]--
		case <-time.After(waitFor):
			t.Fatalf("timed out; still waiting for %v", left)
		}
	}
}

// expectNone checks that nothing is queued on the recorder right now.
func (r *recorder[T]) expectNone(t *testing.T) {
	t.Helper()
	select {
	case got := <-r.events:
		t.Fatalf("unexpected notification %q", got)
	default:
	}
}

// eventually polls cond until it holds, failing the test after waitFor.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testwait.UntilEvery(t, waitFor, 5*time.Millisecond, what, testwait.Bool(cond))
}

// runUntilStopped runs inf until the returned stop is called, which also
// waits for Run to return.
func runUntilStopped[T metav1.Object](inf *Informer[T]) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { inf.Run(ctx) })
	return func() {
		cancel()
		wg.Wait()
	}
}

// waitABit yields while polling for an asynchronous result.
func waitABit() { time.Sleep(50 * time.Microsecond) }

// running runs inf until the test ends and waits for Run to return.
func running[T metav1.Object](t *testing.T, inf *Informer[T]) {
	t.Helper()
	t.Cleanup(runUntilStopped(inf))
}

// gauge reads the pending-notifications series of one handler from reg.
func gauge(t *testing.T, reg *prometheus.Registry, informer, handler string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	for _, mf := range families {
		if mf.GetName() != PendingNotificationsMetric {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, lp := range m.GetLabel() {
				labels[lp.GetName()] = lp.GetValue()
			}
			if labels["informer"] == informer && labels["handler"] == handler {
				return m.GetGauge().GetValue()
			}
		}
	}
	return 0
}
