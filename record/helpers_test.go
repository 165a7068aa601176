package record_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/internal/testwait"
	"github.com/setpoint-dev/setpoint/record"
	"github.com/setpoint-dev/setpoint/rest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const ns = "default"

var (
	cmGVR    = corev1.SchemeGroupVersion.WithResource("configmaps")
	eventGVR = corev1.SchemeGroupVersion.WithResource("events")
)

func start(t *testing.T) (*testserver.Server, *rest.Client) {
	t.Helper()
	srv := testserver.Start(t, testserver.Options{})
	return srv, srv.RESTClient(t)
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// newBroadcaster starts a broadcaster and shuts it down at the end.
func newBroadcaster(t *testing.T, opts record.Options) *record.Broadcaster {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = quiet()
	}
	b, err := record.NewBroadcaster(opts)
	if err != nil {
		t.Fatalf("new broadcaster: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = b.Shutdown(ctx)
	})
	return b
}

func flush(t *testing.T, b *record.Broadcaster) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := b.Flush(ctx); err != nil {
		t.Fatalf("flush: %v", err)
	}
}

// configMap creates a ConfigMap and returns it as stored, TypeMeta cleared
// so the recorder must find its kind in the scheme.
func configMap(t *testing.T, c *rest.Client, name string) *corev1.ConfigMap {
	t.Helper()
	cms := rest.For[*corev1.ConfigMap, *corev1.ConfigMapList](c, cmGVR, true).Namespace(ns)
	cm, err := cms.Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create configmap: %v", err)
	}
	cm.TypeMeta = metav1.TypeMeta{}
	return cm
}

// listEvents reads GET /api/v1/namespaces/NS/events over raw HTTP.
func listEvents(t *testing.T, srv *testserver.Server, namespace string) []corev1.Event {
	t.Helper()
	code, body, _ := srv.Do(t, http.MethodGet, "/api/v1/namespaces/"+namespace+"/events", "", nil)
	if code != http.StatusOK {
		t.Fatalf("list events: %d %s", code, body)
	}
	var list corev1.EventList
	if err := json.Unmarshal(body, &list); err != nil {
		t.Fatalf("decode events: %v", err)
	}
	return list.Items
}

// eventsFor returns the events the "tester" component recorded about the
// named object, keyed by message.
func eventsFor(t *testing.T, srv *testserver.Server, name string) map[string]corev1.Event {
	t.Helper()
	out := map[string]corev1.Event{}
	for _, e := range listEvents(t, srv, ns) {
		if e.InvolvedObject.Name == name && e.Source.Component == "tester" {
			if _, dup := out[e.Message]; dup {
				t.Fatalf("two events about %s with message %q", name, e.Message)
			}
			out[e.Message] = e
		}
	}
	return out
}

// closedURL returns an https URL on which nothing listens.
func closedURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "https://" + addr
}

// eventually polls cond until it holds; the 30s bound is a hang guard.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testwait.UntilEvery(t, 30*time.Second, 5*time.Millisecond, what, testwait.Bool(cond))
}
