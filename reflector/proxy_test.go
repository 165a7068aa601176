package reflector_test

import (
	"bytes"
	"encoding/pem"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"testing"

	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/rest"
)

// tcpProxy forwards TCP connections to a backend. Cut closes every open
// connection (both sides see the connection drop, as when a network path
// or a load balancer fails); SetDown makes it close new connections at
// once, so clients fail before any HTTP exchange.
type tcpProxy struct {
	ln      net.Listener
	backend string
	wg      sync.WaitGroup

	mu    sync.Mutex
	conns map[net.Conn]struct{}
	down  bool
	// accepted counts connections accepted while up.
	accepted int
}

func newTCPProxy(t *testing.T, backend string) *tcpProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	p := &tcpProxy{ln: ln, backend: backend, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.serve()
	t.Cleanup(p.close)
	return p
}

// URL is the https URL clients use to reach the backend through p.
func (p *tcpProxy) URL() string { return "https://" + p.ln.Addr().String() }

func (p *tcpProxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.down {
			p.mu.Unlock()
			c.Close()
			continue
		}
		p.accepted++
		p.mu.Unlock()
		p.wg.Add(1)
		go p.forward(c)
	}
}

func (p *tcpProxy) track(c net.Conn, add bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if add {
		if p.down {
			return false
		}
		p.conns[c] = struct{}{}
	} else {
		delete(p.conns, c)
	}
	return true
}

func (p *tcpProxy) forward(client net.Conn) {
	defer p.wg.Done()
	server, err := net.Dial("tcp", p.backend)
	if err != nil {
		client.Close()
		return
	}
	if !p.track(client, true) || !p.track(server, true) {
		client.Close()
		server.Close()
		return
	}
	var wg sync.WaitGroup
	pipe := func(dst, src net.Conn) {
		defer wg.Done()
		_, _ = io.Copy(dst, src)
		dst.Close()
		src.Close()
	}
	wg.Add(2)
	go pipe(server, client)
	go pipe(client, server)
	wg.Wait()
	p.track(client, false)
	p.track(server, false)
}

// Cut closes every open connection.
func (p *tcpProxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
	}
}

// SetDown makes the proxy refuse service (down) or serve again; going
// down also cuts the open connections.
func (p *tcpProxy) SetDown(down bool) {
	p.mu.Lock()
	p.down = down
	p.mu.Unlock()
	if down {
		p.Cut()
	}
}

func (p *tcpProxy) Accepted() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.accepted
}

func (p *tcpProxy) close() {
	p.ln.Close()
	p.Cut()
	p.wg.Wait()
}

// httpProxy is a real HTTP reverse proxy in front of the server. It
// records the query of every request and can play an old API server that
// rejects streaming lists, or run a hook before forwarding a request.
type httpProxy struct {
	ts *httptest.Server

	mu       sync.Mutex
	requests []request
	// rejectStreaming answers sendInitialEvents requests 422 Invalid, as
	// servers without the WatchList feature do.
	rejectStreaming bool
	// before, when set, runs before a request is forwarded.
	before func(q url.Values)
}

func newHTTPProxy(t *testing.T, srv *testserver.Server) *httpProxy {
	t.Helper()
	target, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = srv.Client.Transport
	rp.FlushInterval = -1
	p := &httpProxy{}
	p.ts = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		p.mu.Lock()
		p.requests = append(p.requests, request{Method: r.Method, Query: q})
		idx := len(p.requests) - 1
		reject, before := p.rejectStreaming, p.before
		p.mu.Unlock()
		w = &statusWriter{ResponseWriter: w, record: func(code int) {
			p.mu.Lock()
			p.requests[idx].Status = code
			p.mu.Unlock()
		}, expired: func() {
			p.mu.Lock()
			p.requests[idx].Expired = true
			p.mu.Unlock()
		}}
		if reject && q.Has("sendInitialEvents") {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnprocessableEntity)
			_, _ = io.WriteString(w, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",`+
				`"message":"ListOptions.meta.k8s.io \"\" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled",`+
				`"reason":"Invalid","details":{"kind":"ListOptions","group":"meta.k8s.io","causes":[{"reason":"FieldValueForbidden","message":"Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled","field":"sendInitialEvents"}]},"code":422}`)
			return
		}
		if before != nil {
			before(q)
		}
		rp.ServeHTTP(w, r)
	}))
	p.ts.EnableHTTP2 = true
	p.ts.StartTLS()
	t.Cleanup(p.ts.Close)
	return p
}

// config returns cfg redirected through the proxy.
func (p *httpProxy) config(cfg *rest.Config) *rest.Config {
	out := *cfg
	out.Host = p.ts.URL
	out.TLS = rest.TLSConfig{CAData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: p.ts.Certificate().Raw})}
	return &out
}

func (p *httpProxy) setRejectStreaming(v bool) {
	p.mu.Lock()
	p.rejectStreaming = v
	p.mu.Unlock()
}

func (p *httpProxy) setBefore(f func(url.Values)) {
	p.mu.Lock()
	p.before = f
	p.mu.Unlock()
}

// request is one request seen by an httpProxy.
type request struct {
	Method string
	Query  url.Values
	// Status is the response's status code (0 until the header is sent).
	Status int
	// Expired is set when the response was a 410 Gone: the status code of
	// a list, or an ERROR event of code 410 in a watch stream (which
	// kube-apiserver, and so setpoint, answers 200 before sending it).
	Expired bool
}

// statusWriter reports the status code of a response, and a 410 ERROR
// event written in it.
type statusWriter struct {
	http.ResponseWriter
	record  func(code int)
	expired func()
	once    sync.Once
}

func (w *statusWriter) WriteHeader(code int) {
	w.once.Do(func() { w.record(code) })
	if code == http.StatusGone {
		w.expired()
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	w.once.Do(func() { w.record(http.StatusOK) })
	if bytes.Contains(b, []byte(`"type":"ERROR"`)) && bytes.Contains(b, []byte(`"code":410`)) {
		w.expired()
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach Flush.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (r request) watch() bool     { return r.Method == http.MethodGet && r.Query.Get("watch") == "true" }
func (r request) list() bool      { return r.Method == http.MethodGet && !r.watch() }
func (r request) streaming() bool { return r.watch() && r.Query.Get("sendInitialEvents") == "true" }

// seen returns the recorded requests for which match holds, in order.
func (p *httpProxy) seen(match func(request) bool) []request {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []request
	for _, r := range p.requests {
		if match(r) {
			out = append(out, r)
		}
	}
	return out
}
