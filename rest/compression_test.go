package rest_test

import (
	"context"
	"net/http"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/rest"
)

// uncompressed records whether the transport decompressed each response
// (Go's transport asks for gzip unless told not to, and then decodes the
// body itself, reporting it in Response.Uncompressed).
type uncompressed struct {
	mu   sync.Mutex
	seen []bool
}

func (u *uncompressed) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(r)
		if err == nil && r.URL.Query().Get("watch") == "true" {
			u.mu.Lock()
			u.seen = append(u.seen, resp.Uncompressed)
			u.mu.Unlock()
		}
		return resp, err
	})
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// A streaming list (sendInitialEvents=true) comes gzip-compressed to a
// client that accepts it, as kube-apiserver sends it; DisableCompression
// (or a kubeconfig cluster's disable-compression) asks for it plain, and
// the events read the same.
func TestDisableCompression(t *testing.T) {
	ctx := context.Background()
	srv := testserver.Start(t, testserver.Options{})
	admin, err := rest.New(srv.RESTConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := configMaps(admin).Create(ctx, newCM("one", nil, map[string]string{"k": "v"}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, disable := range []bool{false, true} {
		var u uncompressed
		cfg := srv.RESTConfig(t)
		cfg.DisableCompression, cfg.WrapTransport = disable, u.wrap
		c, err := rest.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		w, err := configMaps(c).Watch(ctx, metav1.ListOptions{SendInitialEvents: new(true),
			ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true})
		if err != nil {
			t.Fatalf("DisableCompression %v: watch: %v", disable, err)
		}
		if ev := next(t, w); ev.Type != watch.Added || ev.Object.(*corev1.ConfigMap).Data["k"] != "v" {
			t.Errorf("DisableCompression %v: first event %s %+v", disable, ev.Type, ev.Object)
		}
		w.Stop()
		c.CloseIdleConnections()
		u.mu.Lock()
		if len(u.seen) != 1 || u.seen[0] == disable {
			t.Errorf("DisableCompression %v: responses decompressed by the transport %v, want [%v]", disable, u.seen, !disable)
		}
		u.mu.Unlock()
	}
}
