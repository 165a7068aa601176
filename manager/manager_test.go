package manager_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/manager"
)

// The test server has no authorization (every authenticated user may do
// everything), so a "forbidden" sync failure cannot be produced against
// it; the not-found case exercises the same path (the informer's
// LastError in the timeout error).
func TestCacheSyncTimeoutNamesResourceAndReason(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	m := newManager(t, srv.RESTConfig(t), manager.Options{CacheSyncTimeout: 1500 * time.Millisecond})
	widgets := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
	manager.InformerFor[*unstructured.Unstructured](m, widgets, true)
	addConfigMapController(t, m, &recorder{})

	err := m.Start(context.Background())
	if err == nil {
		t.Fatal("Start succeeded without the widgets cache")
	}
	msg := err.Error()
	if !strings.Contains(msg, "timed out waiting for cache of example.com/v1 widgets to sync: ") {
		t.Fatalf("error does not name the resource: %v", err)
	}
	if !apierrors.IsNotFound(err) {
		t.Fatalf("error does not carry the reason (NotFound): %v", err)
	}
	if strings.Contains(msg, "configmaps") {
		t.Fatalf("synced resources must not be blamed: %v", err)
	}
	t.Log(msg)
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

func TestHealthAndMetrics(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	m := newManager(t, srv.RESTConfig(t), manager.Options{MetricsAddr: "127.0.0.1:0", HealthAddr: "127.0.0.1:0"})
	rec := &recorder{}
	addConfigMapController(t, m, rec)
	healthy := true
	if err := m.AddReadyzCheck("custom", func(*http.Request) error {
		if !healthy {
			return errors.New("not today")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := m.AddReadyzCheck("custom", nil); err == nil {
		t.Fatal("duplicate check accepted")
	}
	s := start(m)
	waitClosed(t, "Elected", m.Elected())
	waitClosed(t, "Ready", m.Ready())
	cms, err := manager.Resource[*corev1.ConfigMap, *corev1.ConfigMapList](m)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Namespace("default").Create(context.Background(), &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "probe"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "reconcile", func() bool { return rec.count("probe") > 0 })

	health := "http://" + m.HealthAddr()
	if code, body := get(t, health+"/healthz"); code != 200 || body != "ok" {
		t.Fatalf("/healthz = %d %q", code, body)
	}
	if code, body := get(t, health+"/readyz?verbose"); code != 200 || !strings.Contains(body, "[+]informer-sync ok") ||
		!strings.Contains(body, "[+]custom ok") {
		t.Fatalf("/readyz?verbose = %d %q", code, body)
	}
	if code, _ := get(t, health+"/healthz/ping"); code != 200 {
		t.Fatalf("/healthz/ping = %d", code)
	}
	if code, _ := get(t, health+"/healthz/nope"); code != 404 {
		t.Fatalf("/healthz/nope = %d", code)
	}
	healthy = false
	if code, body := get(t, health+"/readyz"); code != 500 || !strings.Contains(body, "[-]custom failed: not today") {
		t.Fatalf("failing /readyz = %d %q", code, body)
	}

	host := strings.TrimPrefix(srv.URL, "https://")
	code, body := get(t, "http://"+m.MetricsAddr()+"/metrics")
	if code != 200 {
		t.Fatalf("/metrics = %d", code)
	}
	for _, want := range []string{
		`controller_runtime_reconcile_total{controller="configmaps",result="success"}`,
		`controller_runtime_max_concurrent_reconciles{controller="configmaps"} 1`,
		`controller_runtime_active_workers{controller="configmaps"}`,
		`controller_runtime_reconcile_time_seconds_bucket{controller="configmaps"`,
		`workqueue_adds_total{name="configmaps"}`,
		`setpoint_informer_handler_pending_notifications{`,
		`go_goroutines`, `process_cpu_seconds_total`,
		`controller_runtime_reconcile_errors_total{class="invalid",controller="configmaps"} 0`,
		`controller_runtime_reconcile_retries_exhausted_total{controller="configmaps"} 0`,
		// client-go's rest client metrics: the create above, the lists and
		// watches of the informer.
		`rest_client_requests_total{code="201",host="` + host + `",method="POST"} 1`,
		`rest_client_requests_total{code="200",host="` + host + `",method="GET"}`,
		`rest_client_request_duration_seconds_bucket{host="` + host + `",verb="POST",le="0.005"}`,
		`rest_client_request_duration_seconds_bucket{host="` + host + `",verb="GET",le="60"}`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if err := s.stop(t); err != nil {
		t.Fatal(err)
	}
}

// A reconcile in flight at shutdown is waited for and sees its context
// cancelled; Start then returns nil, and TestMain's goleak check proves
// every goroutine stopped.
func TestGracefulShutdown(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	m := newManager(t, srv.RESTConfig(t), manager.Options{})
	entered, cancelled := make(chan struct{}), make(chan struct{})
	var first sync.Once
	addConfigMapController(t, m, reconcileFunc(func(ctx context.Context) {
		holds := false
		first.Do(func() { holds = true })
		if !holds {
			return
		}
		close(entered)
		<-ctx.Done()
		close(cancelled)
	}))
	s := start(m)
	waitClosed(t, "Elected", m.Elected())
	cms, err := manager.Resource[*corev1.ConfigMap, *corev1.ConfigMapList](m)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Namespace("default").Create(context.Background(), &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "slow"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-entered:
	case <-time.After(20 * time.Second):
		t.Fatal("no reconcile")
	}
	if err := s.stop(t); err != nil {
		t.Fatalf("Start: %v", err)
	}
	select {
	case <-cancelled:
	default:
		t.Fatal("Start returned before the in-flight reconcile finished")
	}
	if err := m.Start(context.Background()); err == nil {
		t.Fatal("second Start accepted")
	}
	if err := m.Add(manager.RunnableFunc(func(context.Context) error { return nil })); err == nil {
		t.Fatal("Add after Start accepted")
	}
}

func TestRunnableErrorStopsManager(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	m := newManager(t, srv.RESTConfig(t), manager.Options{})
	boom := errors.New("boom")
	if err := m.Add(manager.RunnableFunc(func(context.Context) error { return boom })); err != nil {
		t.Fatal(err)
	}
	if err := m.Start(context.Background()); !errors.Is(err, boom) {
		t.Fatalf("Start = %v, want boom", err)
	}
}
