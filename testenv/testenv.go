package testenv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/setpoint-dev/setpoint/internal/cluster"
	"github.com/setpoint-dev/setpoint/internal/controlplane"
	"github.com/setpoint-dev/setpoint/rest"
)

// Storage engines for Options.Storage.
const (
	// StorageBolt is the durable store (default): data survives Restart.
	StorageBolt = controlplane.StorageBolt
	// StorageMemory keeps data in memory: Restart starts empty.
	StorageMemory = controlplane.StorageMemory
)

// Options describe an environment; the zero value is an API server alone.
type Options struct {
	// Controllers runs the controller manager and the scheduler.
	Controllers bool
	// Nodes is the number of simulated nodes (implies Controllers).
	Nodes int
	// DataDir holds the store, credentials and kubeconfig; default a new
	// temporary directory, removed by Stop.
	DataDir string
	// Storage is StorageBolt (default) or StorageMemory.
	Storage string
	// ReadyTimeout bounds Start and Restart (default 30 s).
	ReadyTimeout time.Duration
	// Logger receives the control plane's logs; default none.
	Logger *slog.Logger
	// DisableAdmissionPlugins are the admission plugins to leave out, as
	// kube-apiserver's --disable-admission-plugins. By default an API
	// server alone (no Controllers) runs without the ServiceAccount plugin,
	// as controller-runtime's envtest runs kube-apiserver: nothing would
	// create the "default" ServiceAccount every pod needs; with
	// Controllers every default plugin runs, as in a cluster.
	DisableAdmissionPlugins []string
	// MetricsAPI serves metrics.k8s.io (NodeMetrics and PodMetrics, for
	// kubectl top and HorizontalPodAutoscalers), as a cluster with
	// metrics-server does; off by default, as on kube-apiserver alone.
	MetricsAPI bool
	// AuthorizationModes are the API server's --authorization-mode list
	// ("AlwaysAllow", "AlwaysDeny", "RBAC"); empty means RBAC, as
	// kube-apiserver is run. The admin Config is in system:masters, which
	// every mode allows.
	AuthorizationModes []string
	// Webhooks, when set, issues a serving certificate from the
	// environment's CA for a webhook server the test runs and installs
	// webhook configurations that call it (see WebhookOptions,
	// Environment.Webhooks and WaitForWebhooks).
	Webhooks *WebhookOptions
}

// TestQPS and TestBurst are Environment.Config's client limits, envtest's:
// high enough that a test is never paced by its own client.
const (
	TestQPS   float32 = 1000
	TestBurst         = 2000
)

// Environment is a running control plane.
type Environment struct {
	// Config reaches the API server as its admin with setpoint's client,
	// with QPS TestQPS and Burst TestBurst.
	Config *rest.Config
	// Kubeconfig is the path of the admin kubeconfig, for other clients.
	Kubeconfig string
	// URL is the API server's https address.
	URL string
	// Webhooks tells where to serve the webhooks Options.Webhooks
	// installed; nil without them.
	Webhooks *WebhookServing

	opts    Options
	addr    string
	tempDir bool
	c       *cluster.Cluster
}

// Start runs an environment and waits until it is ready.
func Start(opts Options) (*Environment, error) {
	e := &Environment{opts: opts}
	if e.opts.DataDir == "" {
		dir, err := os.MkdirTemp("", "setpoint-testenv-")
		if err != nil {
			return nil, fmt.Errorf("testenv: %w", err)
		}
		e.opts.DataDir, e.tempDir = dir, true
	}
	if e.opts.ReadyTimeout <= 0 {
		e.opts.ReadyTimeout = 30 * time.Second
	}
	if e.opts.Logger == nil {
		e.opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	addr, err := freeAddr()
	if err != nil {
		e.cleanup()
		return nil, err
	}
	e.addr = addr
	if err := e.start(); err != nil {
		e.cleanup()
		return nil, err
	}
	if e.opts.Webhooks != nil {
		ctx, cancel := context.WithTimeout(context.Background(), e.opts.ReadyTimeout)
		defer cancel()
		if err := e.setupWebhooks(ctx); err != nil {
			return nil, errors.Join(err, e.Stop())
		}
	}
	return e, nil
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("testenv: pick a port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// start runs the cluster on e's directory and address.
func (e *Environment) start() error {
	o := e.opts
	withControllers := o.Controllers || o.Nodes > 0
	disable := o.DisableAdmissionPlugins
	if disable == nil && !withControllers {
		disable = []string{"ServiceAccount"}
	}
	c, err := cluster.Start(context.Background(), cluster.Options{
		APIServer: controlplane.Options{DataDir: o.DataDir, Listen: e.addr, Storage: o.Storage, MetricsAPI: o.MetricsAPI,
			AuthorizationModes: o.AuthorizationModes, DisableAdmissionPlugins: disable},
		Nodes:               o.Nodes,
		NoControllerManager: !withControllers,
		NoScheduler:         !withControllers,
		Logger:              o.Logger,
	})
	if err != nil {
		return fmt.Errorf("testenv: start: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.ReadyTimeout)
	defer cancel()
	if err := c.WaitReady(ctx, nil); err != nil {
		return errors.Join(fmt.Errorf("testenv: not ready: %w", err), c.Stop())
	}
	e.c = c
	cfg := *c.Config
	// As envtest's: tests are not paced by client-go's default of 5
	// requests per second.
	cfg.QPS, cfg.Burst = TestQPS, TestBurst
	e.Config, e.Kubeconfig, e.URL = &cfg, c.API.KubeconfigPath(), "https://"+c.API.Addr()
	return nil
}

// Restart stops the control plane and starts it again on the same data
// directory and address. Clients see their connections end and, with the
// durable store, every object again afterwards.
func (e *Environment) Restart() error {
	if e.c == nil {
		return errors.New("testenv: Restart after Stop")
	}
	if err := e.c.Stop(); err != nil {
		return fmt.Errorf("testenv: stop for restart: %w", err)
	}
	e.c = nil
	return e.start()
}

// Stop ends the environment and removes its data directory if Start
// created it. Calling it again does nothing.
func (e *Environment) Stop() error {
	var err error
	if e.c != nil {
		err = e.c.Stop()
		e.c = nil
	}
	e.cleanup()
	return err
}

func (e *Environment) cleanup() {
	if e.tempDir {
		os.RemoveAll(e.opts.DataDir)
		e.tempDir = false
	}
}

// DataDir returns the environment's data directory.
func (e *Environment) DataDir() string { return filepath.Clean(e.opts.DataDir) }
