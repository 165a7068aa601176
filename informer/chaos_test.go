package informer

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"
	"testing"

	"github.com/setpoint-dev/setpoint/internal/apiserver"
	"github.com/setpoint-dev/setpoint/internal/controlplane"
	"github.com/setpoint-dev/setpoint/internal/storage"
	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/rest"
)

// chaosProxy forwards TCP connections to a backend that may move (a
// restarted server listens on another port), so clients keep one URL.
// Cut closes every open connection, as a failing network path does;
// SetDown(true) cuts and then refuses new connections until SetDown(false).
type chaosProxy struct {
	ln net.Listener
	wg sync.WaitGroup

	mu sync.Mutex
	// backend is the address new connections are forwarded to.
	backend string
	// conns holds both ends of every forwarded connection; Cut closes
	// them all.
	conns map[net.Conn]struct{}
	// down: new connections are closed at once.
	down bool
}

func newChaosProxy(t *testing.T, backend string) *chaosProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("proxy listen: %v", err)
	}
	p := &chaosProxy{ln: ln, backend: backend, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.serve()
	t.Cleanup(p.close)
	return p
}

// URL is the https URL that reaches the backend through p.
func (p *chaosProxy) URL() string { return "https://" + p.ln.Addr().String() }

func (p *chaosProxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		down, backend := p.down, p.backend
		p.mu.Unlock()
		if down {
			c.Close()
			continue
		}
		p.wg.Add(1)
		go p.forward(c, backend)
	}
}

// track registers c for Cut; it refuses (false) while the proxy is down,
// so a connection dialled across SetDown(true) never survives it.
func (p *chaosProxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.down {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *chaosProxy) untrack(c net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.conns, c)
}

func (p *chaosProxy) forward(client net.Conn, backend string) {
	defer p.wg.Done()
	server, err := net.Dial("tcp", backend)
	if err != nil {
		client.Close()
		return
	}
	if !p.track(client) || !p.track(server) {
		client.Close()
		server.Close()
		p.untrack(client)
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
	p.untrack(client)
	p.untrack(server)
}

// Cut closes every open connection.
func (p *chaosProxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
	}
}

// SetDown takes the proxy down (cutting every connection) or up again.
func (p *chaosProxy) SetDown(down bool) {
	p.mu.Lock()
	p.down = down
	p.mu.Unlock()
	if down {
		p.Cut()
	}
}

// SetBackend forwards later connections to addr.
func (p *chaosProxy) SetBackend(addr string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.backend = addr
}

func (p *chaosProxy) close() {
	p.ln.Close()
	p.Cut()
	p.wg.Wait()
}

// chaosServer is a real API server on bolt storage that can be stopped and
// started again on its data directory. Its watch cache keeps only a few
// events per resource and storage is compacted only when the test says
// so, so an informer cut off for a while gets 410 Gone.
type chaosServer struct {
	t   *testing.T
	dir string
	srv *testserver.Server
	// store is the running server's storage, captured when it starts.
	store storage.Store
}

// chaosWindow is the watch cache capacity of the chaos server: an outage
// with more changes of one resource than this forces a relist.
const chaosWindow = 6

func startChaosServer(t *testing.T) *chaosServer {
	s := &chaosServer{t: t, dir: t.TempDir()}
	s.start()
	return s
}

func (s *chaosServer) start() {
	s.t.Helper()
	s.srv = testserver.Start(s.t, testserver.Options{
		Storage: controlplane.StorageBolt,
		DataDir: s.dir,
		Tune: func(c *apiserver.Config) {
			c.WatchCacheCapacity = chaosWindow
			c.CompactionInterval = -1
			s.store = c.Storage
		},
	})
}

// restart stops the server and starts a new one on the same data; it
// listens on another port. Clients of the old server should close their
// idle connections first (a graceful shutdown waits for idle HTTP/2
// connections to go away).
func (s *chaosServer) restart() {
	s.t.Helper()
	s.srv.Stop(s.t)
	s.start()
}

// addr is the running server's host:port.
func (s *chaosServer) addr() string { return s.srv.API.Addr() }

// compact discards all history before the current revision, so no list
// or watch can be served at an older version from storage.
func (s *chaosServer) compact() error {
	ctx := context.Background()
	cur, err := s.store.CurrentRevision(ctx)
	if err != nil {
		return fmt.Errorf("current revision: %w", err)
	}
	if err := s.store.Compact(ctx, cur); err != nil {
		return fmt.Errorf("compact at %d: %w", cur, err)
	}
	return nil
}

// directClient talks to the running server without the proxy; it is the
// test's writer and its source of truth.
func (s *chaosServer) directClient() *rest.Client {
	s.t.Helper()
	cfg, err := rest.ConfigFromKubeconfig(s.srv.Kubeconfig, "")
	if err != nil {
		s.t.Fatalf("load kubeconfig: %v", err)
	}
	cfg.QPS = -1
	c, err := rest.New(cfg)
	if err != nil {
		s.t.Fatalf("new direct client: %v", err)
	}
	s.t.Cleanup(c.CloseIdleConnections)
	return c
}

// proxiedClient reaches the server through p; the CA and the token persist
// in the data directory, so it stays valid across restarts. It never
// retries: the reflector's own backoff handles failures.
func (s *chaosServer) proxiedClient(p *chaosProxy) *rest.Client {
	s.t.Helper()
	c, err := rest.New(&rest.Config{
		Host:        p.URL(),
		BearerToken: s.srv.Token,
		TLS:         rest.TLSConfig{CAData: s.srv.API.CA().CertPEM},
		MaxRetries:  -1,
		QPS:         -1,
	})
	if err != nil {
		s.t.Fatalf("new proxied client: %v", err)
	}
	s.t.Cleanup(c.CloseIdleConnections)
	return c
}

// quietLogger drops everything unless SETPOINT_TEST_LOG is set: the chaos
// test provokes errors on purpose.
func quietLogger() *slog.Logger {
	level := slog.LevelError + 1
	if os.Getenv("SETPOINT_TEST_LOG") != "" {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
}
