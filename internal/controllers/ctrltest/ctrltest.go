// Package ctrltest runs controllers against a real API server for tests:
// an internal/testserver server, a manager with the controllers a test
// adds, and a client for the test's own reads and writes.
package ctrltest

import (
	"context"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/setpoint-dev/setpoint/controller"
	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/rest"
)

// Env is a running server and manager.
type Env struct {
	T      testing.TB
	Server *testserver.Server
	Mgr    *manager.Manager
	// Client is the test's own admin client.
	Client *rest.Client
}

// Start starts a server, builds a manager on it, lets add register the
// controllers, and runs the manager until the test ends.
func Start(t testing.TB, add func(*Env) error) *Env {
	t.Helper()
	srv := testserver.Start(t, testserver.Options{MetricsAPI: true})
	mgr, err := manager.New(manager.Options{Config: srv.RESTConfig(t), MetricsAddr: "0", HealthAddr: "0",
		Logger: slog.New(slog.DiscardHandler), NotRetried: []controller.ErrorClass{}}) // as the controller manager
	if err != nil {
		t.Fatal(err)
	}
	env := &Env{T: t, Server: srv, Mgr: mgr, Client: srv.RESTClient(t)}
	if err := add(env); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("manager: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("manager did not stop")
		}
		mgr.Client().CloseIdleConnections()
	})
	return env
}

// ClusterCA is the PEM CA bundle the admin client trusts: the cluster CA,
// which signs the API server's serving certificate.
func (e *Env) ClusterCA() []byte {
	e.T.Helper()
	cfg := e.Server.RESTConfig(e.T)
	if len(cfg.TLS.CAData) > 0 {
		return cfg.TLS.CAData
	}
	b, err := os.ReadFile(cfg.TLS.CAFile)
	if err != nil {
		e.T.Fatal(err)
	}
	return b
}

// Eventually polls cond every 20 ms until it returns nil, failing the test
// with its last error after 20 s.
func (e *Env) Eventually(what string, cond func() error) {
	e.T.Helper()
	deadline := time.Now().Add(20 * time.Second)
	var err error
	for time.Now().Before(deadline) {
		if err = cond(); err == nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	e.T.Fatalf("%s: %v", what, err)
}
