package informer

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"testing"

	"github.com/setpoint-dev/setpoint/internal/apiserver"
	"github.com/setpoint-dev/setpoint/internal/controlplane"
	"github.com/setpoint-dev/setpoint/internal/storage"
	"github.com/setpoint-dev/setpoint/internal/tcpproxy"
	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/rest"
)

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
func (s *chaosServer) proxiedClient(p *tcpproxy.Proxy) *rest.Client {
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
