package webhookclient_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/internal/testwait"
	"github.com/setpoint-dev/setpoint/internal/webhookclient"
	"github.com/setpoint-dev/setpoint/internal/webhookclient/webhooktest"
)

func create(t *testing.T, s *testserver.Server, path, body string) {
	t.Helper()
	code, b, _ := s.Do(t, "POST", path, "application/json", strings.NewReader(body))
	if code != http.StatusCreated {
		t.Fatalf("POST %s: %d %s", path, code, b)
	}
}

// A webhook served on the host is registered as a Service without
// selector plus an EndpointSlice (or Endpoints) pointing at the host (an
// address outside 127.0.0.0/8, which their validation refuses, as
// kube-apiserver's); the call verifies the certificate against
// <name>.<namespace>.svc.
func TestServiceReference(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	env := s.API.Env()
	ip := webhooktest.HostIP(t)
	hook := webhooktest.StartOn(t, webhooktest.NewCA(t), ip, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(r.URL.Path))
	}), "hook.default.svc", "legacy.default.svc")
	// A server whose certificate does not name its Service.
	stranger := webhooktest.StartOn(t, webhooktest.NewCA(t), ip, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))

	svc := func(name, typ string) string {
		return fmt.Sprintf(`{"apiVersion":"v1","kind":"Service","metadata":{"name":%q},"spec":{"type":%q,"ports":[{"name":"https","port":443,"targetPort":9443}]}}`, name, typ)
	}
	slice := func(name, svc string, port int32, ready bool) string {
		return fmt.Sprintf(`{"apiVersion":"discovery.k8s.io/v1","kind":"EndpointSlice","metadata":{"name":%q,"labels":{"kubernetes.io/service-name":%q}},
			"addressType":"IPv4","endpoints":[{"addresses":[%q],"conditions":{"ready":%t}}],"ports":[{"name":"https","port":%d}]}`, name, svc, ip, ready, port)
	}
	create(t, s, "/api/v1/namespaces/default/services", svc("hook", "ClusterIP"))
	create(t, s, "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices", slice("hook-1", "hook", hook.Port, true))
	create(t, s, "/api/v1/namespaces/default/services", svc("legacy", "ClusterIP"))
	create(t, s, "/api/v1/namespaces/default/endpoints", fmt.Sprintf(`{"apiVersion":"v1","kind":"Endpoints","metadata":{"name":"legacy"},
		"subsets":[{"addresses":[{"ip":%q}],"ports":[{"name":"https","port":%d}]}]}`, ip, hook.Port))
	create(t, s, "/api/v1/namespaces/default/services", svc("empty", "ClusterIP"))
	create(t, s, "/api/v1/namespaces/default/services", svc("notready", "ClusterIP"))
	create(t, s, "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices", slice("notready-1", "notready", hook.Port, false))
	create(t, s, "/api/v1/namespaces/default/services", svc("stranger", "ClusterIP"))
	create(t, s, "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices", slice("stranger-1", "stranger", stranger.Port, true))
	create(t, s, "/api/v1/namespaces/default/services",
		`{"apiVersion":"v1","kind":"Service","metadata":{"name":"ext"},"spec":{"type":"ExternalName","externalName":"example.com","ports":[{"port":443}]}}`)

	c := webhookclient.New(webhookclient.Options{})
	defer c.Close()
	retry := true
	call := func(name string, port int32, ca []byte) (string, error) {
		cfg := webhookclient.ClientConfig{CABundle: ca, Service: &webhookclient.ServiceReference{Namespace: "default", Name: name, Path: "/mutate", Port: port}}
		var resp *webhookclient.Response
		var err error
		// The watch caches see the objects a moment after their writes:
		// while retry holds, a "not found" or "no endpoints" is asked
		// again for up to 5 s, and the last answer is the call's.
		_ = testwait.Poll(t.Context(), 5*time.Second, 50*time.Millisecond, func() error {
			resp, err = c.Post(context.Background(), cfg, webhookclient.Request{Timeout: 2 * time.Second, Resolver: webhookclient.EnvResolver(env)})
			if err == nil || !retry || !strings.Contains(err.Error(), "not found") && !strings.Contains(err.Error(), "no endpoints") {
				return nil
			}
			return err
		})
		if err != nil {
			return "", err
		}
		return string(resp.Body), nil
	}
	for _, name := range []string{"hook", "legacy"} {
		if got, err := call(name, 0, hook.CABundle); err != nil || got != "/mutate" {
			t.Errorf("%s: %q %v", name, got, err)
		}
	}
	// Written before those, the other objects are in the caches now.
	retry = false
	fail := []struct {
		name string
		port int32
		ca   []byte
		want string
	}{
		{"missing", 443, hook.CABundle, `Post "https://missing.default.svc:443/mutate?timeout=2s": service "missing" not found`},
		{"hook", 8443, hook.CABundle, `Post "https://hook.default.svc:8443/mutate?timeout=2s": no service port 8443 found for service "hook"`},
		{"empty", 443, hook.CABundle, `Post "https://empty.default.svc:443/mutate?timeout=2s": no endpoints available for service "empty"`},
		{"notready", 443, hook.CABundle, `Post "https://notready.default.svc:443/mutate?timeout=2s": no endpoints available for service "notready"`},
		{"ext", 443, hook.CABundle, `Post "https://ext.default.svc:443/mutate?timeout=2s": unsupported service type "ExternalName"`},
		{"stranger", 443, stranger.CABundle, `Post "https://stranger.default.svc:443/mutate?timeout=2s": tls: failed to verify certificate: x509: certificate is valid for localhost, not stranger.default.svc`},
	}
	for _, f := range fail {
		_, err := call(f.name, f.port, f.ca)
		if err == nil || err.Error() != f.want {
			t.Errorf("%s:%d: err = %v, want %s", f.name, f.port, err, f.want)
		}
	}
	// The resolver's errors are kube's API errors (503 for no endpoints).
	_, err := webhookclient.EnvResolver(env).ResolveEndpoint(context.Background(), "default", "empty", 443)
	if !apierrors.IsServiceUnavailable(err) {
		t.Errorf("no endpoints: %T %v, want a 503", err, err)
	}
	// One transport per (CA, server name): calls share connections.
	before := hook.Conns.Load()
	for i := 0; i < 3; i++ {
		if _, err := call("hook", 0, hook.CABundle); err != nil {
			t.Fatal(err)
		}
	}
	if n := hook.Conns.Load() - before; n != 0 {
		t.Errorf("3 more calls opened %d connections, want 0", n)
	}
}
