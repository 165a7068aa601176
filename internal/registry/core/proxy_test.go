package core_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/setpoint-dev/setpoint/internal/testserver"
)

// setPodStatus makes a pod Running at ip, ready or not.
func setPodStatus(t *testing.T, s *testserver.Server, name, ip string, ready bool) {
	t.Helper()
	status := "False"
	if ready {
		status = "True"
	}
	mustSend(t, s, http.MethodPatch, podsPath+"/"+name+"/status", "application/merge-patch+json",
		fmt.Sprintf(`{"status":{"phase":"Running","podIP":%q,"podIPs":[{"ip":%q}],"conditions":[{"type":"Ready","status":%q}]}}`, ip, ip, status), 200)
}

func TestProxyRefusals(t *testing.T) {
	s, _ := podCluster(t)
	setPodStatus(t, s, "two", "127.0.0.1", true)
	mustSend(t, s, http.MethodPost, "/api/v1/namespaces/default/services", "application/json",
		`{"apiVersion":"v1","kind":"Service","metadata":{"name":"svc1"},"spec":{"selector":{"app":"none"},"ports":[{"name":"web","port":80,"targetPort":8080},{"name":"other","port":81}]}}`, 201)
	for _, c := range []struct {
		path, reason, msg string
		code              int
	}{
		{podsPath + "/one/proxy", "BadRequest", "address not allowed", 400},   // no IP yet
		{podsPath + "/two/proxy/x", "BadRequest", "address not allowed", 400}, // loopback
		{podsPath + "/missing/proxy", "NotFound", `pods "missing" not found`, 404},
		{podsPath + "/a:b:c:d/proxy", "BadRequest", `invalid pod request "a:b:c:d"`, 400},
		{"/api/v1/nodes/n1/proxy/healthz", "BadRequest", "address not allowed", 400}, // loopback
		{"/api/v1/nodes/missing/proxy", "NotFound", `nodes "missing" not found`, 404},
		{"/api/v1/nodes/ftp:n1:1/proxy", "BadRequest", `invalid node request "ftp:n1:1"`, 400},
		{"/api/v1/nodes/noaddr/proxy", "", "no preferred addresses found; known addresses: []", 500},
		{"/api/v1/namespaces/default/services/nosvc/proxy", "ServiceUnavailable", `no endpoints available for service "nosvc"`, 503},
		{"/api/v1/namespaces/default/services/nosvc:80/proxy", "NotFound", `services "nosvc" not found`, 404},
		{"/api/v1/namespaces/default/services/svc1:99/proxy", "ServiceUnavailable", `no service port 99 found for service "svc1"`, 503},
		{"/api/v1/namespaces/default/services/svc1:web/proxy", "ServiceUnavailable", `no endpoints available for service "svc1"`, 503},
		{"/api/v1/namespaces/default/services/a:b:c:d/proxy", "BadRequest", `invalid service request "a:b:c:d"`, 400},
	} {
		code, body := send(t, s, http.MethodGet, c.path, "", "")
		expectStatus(t, c.path, code, body, c.code, c.reason, c.msg)
	}
}

// TestProxyReachesBackends needs an address the proxies accept (global
// unicast) that this machine listens on.
func TestProxyReachesBackends(t *testing.T) {
	ip := globalIP()
	if ip == "" {
		t.Skip("no global unicast address on this machine: the proxies refuse loopback backends, as kube-apiserver does")
	}
	s := testserver.Start(t, testserver.Options{})
	k := startKubelet(t, ip)
	mustSend(t, s, http.MethodPost, "/api/v1/nodes", "application/json", nodeJSON("n1", k.port(), "InternalIP="+ip), 201)
	web := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "web %s %s", r.Method, r.URL.RequestURI())
	}))
	web.Listener.Close()
	web.Listener = mustListen(t, ip)
	web.Start()
	defer web.Close()
	webURL, _ := url.Parse(web.URL)
	webPort := webURL.Port()
	mustSend(t, s, http.MethodPost, podsPath, "application/json", fmt.Sprintf(
		`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web","labels":{"app":"web"}},"spec":{"nodeName":"n1","containers":[{"name":"c","image":"nginx","ports":[{"name":"http","containerPort":%s}]}]}}`, webPort), 201)
	mustSend(t, s, http.MethodPost, "/api/v1/namespaces/default/services", "application/json",
		`{"apiVersion":"v1","kind":"Service","metadata":{"name":"web"},"spec":{"selector":{"app":"web"},"ports":[{"name":"http","port":80,"targetPort":"http"}]}}`, 201)

	t.Run("nodes/proxy reaches the kubelet with the client certificate", func(t *testing.T) {
		code, body := send(t, s, http.MethodGet, "/api/v1/nodes/n1/proxy/healthz?verbose=1", "", "")
		if code != 200 || body != "GET /healthz?verbose=1" {
			t.Errorf("%d %q", code, body)
		}
		if r := k.last(t); len(r.TLS.PeerCertificates) == 0 {
			t.Error("no client certificate at the kubelet")
		}
		code, body = send(t, s, http.MethodGet, "/api/v1/nodes/http:n1:"+webPort+"/proxy/other", "", "")
		if code != 200 || body != "web GET /other" {
			t.Errorf("another port of the node: %d %q", code, body)
		}
	})
	t.Run("pods/proxy reaches the pod's first port", func(t *testing.T) {
		code, body := send(t, s, http.MethodGet, podsPath+"/web/proxy/x?y=1", "", "")
		expectStatus(t, "not running", code, body, 400, "BadRequest", "address not allowed")
		setPodStatus(t, s, "web", ip, false)
		if code, body = send(t, s, http.MethodGet, podsPath+"/web/proxy/x?y=1", "", ""); code != 200 || body != "web GET /x?y=1" {
			t.Errorf("%d %q", code, body)
		}
		if code, body = send(t, s, http.MethodPost, podsPath+"/http:web:"+webPort+"/proxy/", "", ""); code != 200 || body != "web POST /" {
			t.Errorf("scheme:name:port: %d %q", code, body)
		}
	})
	t.Run("services/proxy reaches a ready endpoint", func(t *testing.T) {
		setPodStatus(t, s, "web", ip, false)
		code, body := send(t, s, http.MethodGet, "/api/v1/namespaces/default/services/web/proxy/", "", "")
		expectStatus(t, "unready", code, body, 503, "ServiceUnavailable", `no endpoints available for service "web"`)
		setPodStatus(t, s, "web", ip, true)
		code, body = send(t, s, http.MethodGet, "/api/v1/namespaces/default/services/web:80/proxy/a/b", "", "")
		if code != 200 || body != "web GET /a/b" {
			t.Errorf("by port number: %d %q", code, body)
		}
		code, body = send(t, s, http.MethodGet, "/api/v1/namespaces/default/services/web:http/proxy/", "", "")
		if code != 200 || body != "web GET /" {
			t.Errorf("by port name: %d %q", code, body)
		}
		code, body = send(t, s, http.MethodGet, "/api/v1/namespaces/default/services/web/proxy/", "", "")
		expectStatus(t, "unnamed port of a named-port service", code, body, 503, "ServiceUnavailable", `no endpoints available for service "web"`)
	})
}

// TestServiceProxyEndpoints checks that an Endpoints object, when the
// server serves them and one exists, names the backends (a selector-less
// service), as kube-apiserver reads them.
func TestServiceProxyEndpoints(t *testing.T) {
	ip := globalIP()
	if ip == "" {
		t.Skip("no global unicast address on this machine: the proxies refuse loopback backends, as kube-apiserver does")
	}
	s := testserver.Start(t, testserver.Options{})
	web := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "ext %s", r.URL.Path)
	}))
	web.Listener.Close()
	web.Listener = mustListen(t, ip)
	web.Start()
	defer web.Close()
	u, _ := url.Parse(web.URL)
	const svcPath = "/api/v1/namespaces/default/services"
	mustSend(t, s, http.MethodPost, svcPath, "application/json",
		`{"apiVersion":"v1","kind":"Service","metadata":{"name":"ext"},"spec":{"ports":[{"name":"web","port":80}]}}`, 201)
	code, body := send(t, s, http.MethodGet, svcPath+"/ext:web/proxy/", "", "")
	expectStatus(t, "no Endpoints", code, body, 503, "ServiceUnavailable", `no endpoints available for service "ext"`)
	mustSend(t, s, http.MethodPost, "/api/v1/namespaces/default/endpoints", "application/json", fmt.Sprintf(
		`{"apiVersion":"v1","kind":"Endpoints","metadata":{"name":"ext"},"subsets":[{"addresses":[{"ip":%q}],"ports":[{"name":"web","port":%s}]}]}`, ip, u.Port()), 201)
	if code, body = send(t, s, http.MethodGet, svcPath+"/ext:web/proxy/p", "", ""); code != 200 || body != "ext /p" {
		t.Errorf("%d %q", code, body)
	}
	code, body = send(t, s, http.MethodGet, svcPath+"/ext:other/proxy/p", "", "")
	expectStatus(t, "no such port", code, body, 503, "ServiceUnavailable", `no endpoints available for service "ext:other"`)
}
