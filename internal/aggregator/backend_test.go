package aggregator_test

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/setpoint-dev/setpoint/internal/apiserver"
	"github.com/setpoint-dev/setpoint/internal/pki"
	"github.com/setpoint-dev/setpoint/internal/testserver"
)

// Names of the test's aggregated group and its service.
const (
	group   = "wardle.aggregator.test"
	version = "v1"
	ns      = "aggregator"
	svcName = "api"
)

// hostIP is a non-loopback IPv4 address of this host: endpoints may not be
// loopback addresses, so the backend listens there.
func hostIP(t *testing.T) string {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() && !n.IP.IsLinkLocalUnicast() {
			return n.IP.String()
		}
	}
	t.Skip("no non-loopback IPv4 address to serve a backend on (endpoints refuse loopback addresses)")
	return ""
}

// seen is one request the backend received.
type seen struct {
	path   string
	header http.Header
	peer   string // the client certificate's CommonName
}

// backend is a real HTTPS aggregated server for the test group: it
// requires a client certificate of the front-proxy CA and records what it
// receives.
type backend struct {
	srv    *httptest.Server
	caPEM  []byte
	port   int32
	mu     sync.Mutex
	seen   []seen
	events chan string // watch events to stream
}

// count returns how many requests for path the backend received.
func (b *backend) count(path string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, s := range b.seen {
		if s.path == path {
			n++
		}
	}
	return n
}

// lastFor returns the last request for path.
func (b *backend) lastFor(t *testing.T, path string) seen {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	for i := len(b.seen) - 1; i >= 0; i-- {
		if b.seen[i].path == path {
			return b.seen[i]
		}
	}
	t.Fatalf("backend never received %s", path)
	return seen{}
}

const resourceList = `{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"` + group + `/` + version + `","resources":[` +
	`{"name":"flunders","singularName":"flunder","namespaced":true,"kind":"Flunder","verbs":["create","delete","get","list","watch"]},` +
	`{"name":"flunders/status","singularName":"","namespaced":true,"kind":"Flunder","verbs":["get","update"]}]}`

const openAPIV3 = `{"openapi":"3.0.0","info":{"title":"Wardle","version":"0.1"},"paths":{"/apis/` + group + `/` + version + `/flunders":{}}}`

const openAPIV2 = `{"swagger":"2.0","info":{"title":"Wardle","version":"0.1"},"paths":{"/apis/` + group + `/` + version + `/flunders":{"get":{"operationId":"listFlunders","responses":{"200":{"description":"OK"}}}},"/version/":{"get":{"responses":{"200":{"description":"OK"}}}}},` +
	`"definitions":{"test.wardle.Flunder":{"type":"object"}}}`

func (b *backend) serveHTTP(w http.ResponseWriter, r *http.Request) {
	b.mu.Lock()
	s := seen{path: r.URL.Path, header: r.Header.Clone()}
	if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
		s.peer = r.TLS.PeerCertificates[0].Subject.CommonName
	}
	b.seen = append(b.seen, s)
	b.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch p := r.URL.Path; {
	case p == "/apis":
		fmt.Fprint(w, `{"kind":"APIGroupList","apiVersion":"v1","groups":[]}`) // no aggregated discovery: the legacy fallback is used
	case p == "/apis/"+group+"/"+version:
		fmt.Fprint(w, resourceList)
	case p == "/openapi/v2":
		fmt.Fprint(w, openAPIV2)
	case p == "/openapi/v3":
		fmt.Fprint(w, `{"paths":{"apis/`+group+`/`+version+`":{"serverRelativeURL":"/openapi/v3/apis/`+group+`/`+version+`?hash=ABC"}}}`)
	case p == "/openapi/v3/apis/"+group+"/"+version:
		fmt.Fprint(w, openAPIV3)
	case r.URL.Query().Get("watch") == "true":
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		for {
			select {
			case ev := <-b.events:
				fmt.Fprintln(w, ev)
				w.(http.Flusher).Flush()
			case <-r.Context().Done():
				return
			}
		}
	case strings.HasPrefix(p, "/apis/"+group+"/"+version+"/"):
		body, _ := json.Marshal(map[string]any{"kind": "FlunderList", "apiVersion": group + "/" + version,
			"metadata": map[string]any{}, "items": []any{}, "method": r.Method, "query": r.URL.RawQuery})
		_, _ = w.Write(body)
	default:
		http.NotFound(w, r)
	}
}

// startBackend serves the backend on the host's address with a
// certificate for api.aggregator.svc, trusting the front-proxy CA in
// frontProxyCAFile for client certificates.
func startBackend(t *testing.T, frontProxyCAFile string) *backend {
	t.Helper()
	dir := t.TempDir()
	ca, err := pki.EnsureCA(dir)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := ca.EnsureServing(dir, []string{svcName + "." + ns + ".svc"})
	if err != nil {
		t.Fatal(err)
	}
	fpPEM, err := os.ReadFile(frontProxyCAFile)
	if err != nil {
		t.Fatal(err)
	}
	clients := x509.NewCertPool()
	clients.AppendCertsFromPEM(fpPEM)
	ln, err := net.Listen("tcp", net.JoinHostPort(hostIP(t), "0"))
	if err != nil {
		t.Fatal(err)
	}
	b := &backend{caPEM: ca.CertPEM, port: int32(ln.Addr().(*net.TCPAddr).Port), events: make(chan string)}
	b.srv = httptest.NewUnstartedServer(http.HandlerFunc(b.serveHTTP))
	b.srv.Listener.Close()
	b.srv.Listener = ln
	b.srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: clients, MinVersion: tls.VersionTLS12}
	b.srv.StartTLS()
	t.Cleanup(func() {
		b.srv.CloseClientConnections()
		b.srv.Close()
	})
	return b
}

// frontProxy returns the front-proxy credentials of a new directory.
func frontProxy(t *testing.T) pki.FrontProxy {
	t.Helper()
	fp, err := pki.EnsureFrontProxy(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return fp
}

// startServer runs a test server that aggregates with fp's credentials,
// checking APIServices every 200 ms.
func startServer(t *testing.T, fp pki.FrontProxy) *testserver.Server {
	t.Helper()
	return testserver.Start(t, testserver.Options{Tune: func(c *apiserver.Config) {
		c.RequestHeader = apiserver.DefaultRequestHeaderConfig(fp.CAFile, pki.FrontProxyClientUser)
		c.ProxyClientCertFile, c.ProxyClientKeyFile = fp.ClientCertFile, fp.ClientKeyFile
		c.AggregatorResyncInterval = 200 * time.Millisecond
	}})
}
