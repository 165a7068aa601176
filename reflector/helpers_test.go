package reflector_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/cache"
	"github.com/setpoint-dev/setpoint/internal/apiserver"
	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/internal/testwait"
	"github.com/setpoint-dev/setpoint/reflector"
	"github.com/setpoint-dev/setpoint/rest"
)

// TestMain fails the package if a test leaves a goroutine behind: Run must
// close every watch and request it opened before returning.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// The real types satisfy the reflector's interfaces.
var (
	_ reflector.ListerWatcher[*corev1.ConfigMapList] = (*rest.Resource[*corev1.ConfigMap, *corev1.ConfigMapList])(nil)
	_ reflector.Sink[*corev1.ConfigMap]              = (*cache.Queue[*corev1.ConfigMap])(nil)
)

type cmResource = rest.Resource[*corev1.ConfigMap, *corev1.ConfigMapList]

// start runs a real API server.
func start(t *testing.T, tune func(*apiserver.Config)) *testserver.Server {
	t.Helper()
	return testserver.Start(t, testserver.Options{Tune: tune})
}

// clientConfig is the admin configuration of srv, without client retries
// (the reflector's own backoff is under test) and without a rate limit.
func clientConfig(t *testing.T, srv *testserver.Server) *rest.Config {
	t.Helper()
	cfg := srv.RESTConfig(t)
	cfg.MaxRetries = -1
	cfg.QPS = -1
	return cfg
}

// configMaps returns the configmaps accessor in namespace "default" of a
// client built from cfg.
func configMaps(t *testing.T, cfg *rest.Config) *cmResource {
	t.Helper()
	c, err := rest.New(cfg)
	if err != nil {
		t.Fatalf("new client: %v", err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return rest.For[*corev1.ConfigMap, *corev1.ConfigMapList](c, corev1.SchemeGroupVersion.WithResource("configmaps"), true).Namespace("default")
}

func createCM(t *testing.T, cms *cmResource, name, value string) *corev1.ConfigMap {
	t.Helper()
	cm, err := cms.Create(context.Background(), &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"test": "reflector"}},
		Data:       map[string]string{"v": value},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
	return cm
}

func updateCM(t *testing.T, cms *cmResource, cm *corev1.ConfigMap, value string) *corev1.ConfigMap {
	t.Helper()
	cm = cm.DeepCopy()
	cm.Data = map[string]string{"v": value}
	out, err := cms.Update(context.Background(), cm, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update %s: %v", cm.Name, err)
	}
	return out
}

func deleteCM(t *testing.T, cms *cmResource, name string) {
	t.Helper()
	if err := cms.Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete %s: %v", name, err)
	}
}

// onlyTestObjects selects the configmaps the tests create (the server
// creates others, such as kube-root-ca.crt, on its own).
var getOpts = metav1.GetOptions{}

func onlyTestObjects(o *metav1.ListOptions) { o.LabelSelector = "test=reflector" }

// running starts r and returns a stop function that cancels it and waits
// for Run to return.
func running(t *testing.T, run func(context.Context)) func() {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		run(ctx)
	}()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Error("Run did not return within 10s of cancellation")
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// eventually polls cond until it holds, failing the test after 20s. It
// waits for asynchronous outcomes; it does not measure time.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testwait.UntilEvery(t, 20*time.Second, 5*time.Millisecond, what, testwait.Bool(cond))
}

// call is one sink call as recorded.
type call struct {
	Op string // add, update, delete, replace
	// Name and Value of the object for events; for replace, Names lists
	// the objects in order and RV is the list's resourceVersion.
	Name, Value, RV string
	Names           []string
}

func (c call) String() string {
	if c.Op == "replace" {
		return fmt.Sprintf("replace@%s%v", c.RV, c.Names)
	}
	return fmt.Sprintf("%s %s=%s@%s", c.Op, c.Name, c.Value, c.RV)
}

// recorder is a Sink that records every call in order (a test double of
// the sink only; the reflector talks to a real server).
type recorder struct {
	mu    sync.Mutex
	calls []call
}

func (r *recorder) event(op string, cm *corev1.ConfigMap) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, call{Op: op, Name: cm.Name, Value: cm.Data["v"], RV: cm.ResourceVersion})
	return nil
}

func (r *recorder) Add(cm *corev1.ConfigMap) error    { return r.event("add", cm) }
func (r *recorder) Update(cm *corev1.ConfigMap) error { return r.event("update", cm) }
func (r *recorder) Delete(cm *corev1.ConfigMap) error { return r.event("delete", cm) }

func (r *recorder) Replace(list []*corev1.ConfigMap, rv string) error {
	names := make([]string, len(list))
	for i, cm := range list {
		names[i] = cm.Name + "=" + cm.Data["v"]
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, call{Op: "replace", RV: rv, Names: names})
	return nil
}

func (r *recorder) snapshot() []call {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]call(nil), r.calls...)
}

func (r *recorder) count(op string) int {
	n := 0
	for _, c := range r.snapshot() {
		if c.Op == op {
			n++
		}
	}
	return n
}

// events returns the recorded watch events after the last replace.
func (r *recorder) eventsSinceReplace() []call {
	calls := r.snapshot()
	for i := len(calls) - 1; i >= 0; i-- {
		if calls[i].Op == "replace" {
			return calls[i+1:]
		}
	}
	return calls
}

// harness is a real server with the reflector's path going through a TCP
// proxy (to cut or refuse connections) and then an HTTP proxy (to see
// and shape requests): reflector -> tcp -> http -> server. Test writes go
// straight to the server.
type harness struct {
	srv    *testserver.Server
	direct *cmResource
	http   *httpProxy
	tcp    *tcpProxy
	// cms is the reflector's accessor, through both proxies; cfg the
	// client configuration it was built from.
	cms *cmResource
	cfg *rest.Config
}

func newHarness(t *testing.T, tune func(*apiserver.Config)) *harness {
	t.Helper()
	h := &harness{srv: start(t, tune)}
	cfg := clientConfig(t, h.srv)
	h.direct = configMaps(t, cfg)
	h.http = newHTTPProxy(t, h.srv)
	viaHTTP := h.http.config(cfg)
	h.tcp = newTCPProxy(t, h.http.ts.Listener.Addr().String())
	viaTCP := *viaHTTP
	viaTCP.Host = h.tcp.URL()
	h.cfg = &viaTCP
	h.cms = configMaps(t, h.cfg)
	return h
}

// queueSink is the real sink of an informer: a cache.Queue whose batches a
// consumer goroutine applies to an indexer, recording the notifications.
type queueSink[T metav1.Object] struct {
	q     *cache.Queue[T]
	store *cache.ThreadSafeIndexer[T]
	done  chan struct{}

	mu      sync.Mutex
	events  []cache.Event[T]
	batches []cache.BatchKind
}

func newQueueSink[T metav1.Object](t *testing.T) *queueSink[T] {
	t.Helper()
	s := &queueSink[T]{store: cache.NewObjectIndexer[T](nil), done: make(chan struct{})}
	s.q = cache.NewQueue(cache.MetaNamespaceKeyFunc[T], s.store)
	go func() {
		defer close(s.done)
		for {
			err := s.q.Pop(func(b cache.Batch[T]) error {
				evs, err := cache.Apply[T](s.store, b)
				s.mu.Lock()
				s.events = append(s.events, evs...)
				s.batches = append(s.batches, b.Kind)
				s.mu.Unlock()
				return err
			})
			if err == cache.ErrClosed {
				return
			}
			if err != nil {
				t.Errorf("pop: %v", err)
			}
		}
	}()
	t.Cleanup(func() {
		s.q.Close()
		<-s.done
	})
	return s
}

func (s *queueSink[T]) snapshot() ([]cache.Event[T], []cache.BatchKind) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]cache.Event[T](nil), s.events...), append([]cache.BatchKind(nil), s.batches...)
}

// contents maps each stored object's name to what value returns for it.
func (s *queueSink[T]) contents(value func(T) string) map[string]string {
	out := map[string]string{}
	for _, o := range s.store.List() {
		out[o.GetName()] = value(o)
	}
	return out
}

func cmValue(cm *corev1.ConfigMap) string { return cm.Data["v"] }

func apierrorsIsNotFound(err error) bool { return apierrors.IsNotFound(err) }

// testLogger is quiet unless SETPOINT_TEST_LOG is set.
func testLogger() *slog.Logger {
	level := slog.LevelError + 1
	if os.Getenv("SETPOINT_TEST_LOG") != "" {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
}
