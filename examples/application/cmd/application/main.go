// Command application runs the Application operator (package
// application, seeds 001 §8.3 and 004 §5, §7): every Application
// (apps.setpoint.dev/v1) gets a Deployment and a Service, a status that
// follows its pods' readiness, and a record ConfigMap in
// setpoint-records that a finalizer deletes before the Application goes.
//
//	kubectl apply -f examples/application/config/crd.yaml
//	kubectl wait --for=condition=Established crd/applications.apps.setpoint.dev
//	application --kubeconfig .setpoint/kubeconfig --leader-elect --metrics-addr :8080
//
// The CRD must be established before it starts. It logs (slog, text) to
// stderr, serves /metrics on --metrics-addr and /healthz, /readyz on
// --health-addr ("0" turns either off), and stops cleanly on SIGINT or
// SIGTERM: in-flight reconciles finish, queued events are written, the
// leader Lease is released; the exit status is then 0.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/setpoint-dev/setpoint/examples/application"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/rest"
)

type flags struct {
	kubeconfig  string
	leaderElect bool
	leaseNS     string
	metricsAddr string
	healthAddr  string
	workers     int
	verbose     bool
}

func main() {
	var f flags
	flag.StringVar(&f.kubeconfig, "kubeconfig", "", "path to a kubeconfig (default: $KUBECONFIG or ~/.kube/config)")
	flag.BoolVar(&f.leaderElect, "leader-elect", false, "hold the Lease application-operator before acting, so that one replica acts at a time")
	flag.StringVar(&f.leaseNS, "leader-elect-namespace", "default", "namespace of the leader-election Lease")
	flag.StringVar(&f.metricsAddr, "metrics-addr", manager.DefaultMetricsAddr, "address to serve /metrics on (\"0\": off)")
	flag.StringVar(&f.healthAddr, "health-addr", manager.DefaultHealthAddr, "address to serve /healthz and /readyz on (\"0\": off)")
	flag.IntVar(&f.workers, "workers", application.DefaultWorkers, "number of concurrent reconciles")
	flag.BoolVar(&f.verbose, "v", false, "log at debug level")
	flag.Parse()

	level := slog.LevelInfo
	if f.verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, f, log); err != nil {
		log.Error("application operator failed", "err", err)
		os.Exit(1)
	}
	log.Info("application operator stopped")
}

func run(ctx context.Context, f flags, log *slog.Logger) error {
	if f.workers <= 0 {
		return fmt.Errorf("--workers must be positive, got %d", f.workers)
	}
	var cfg *rest.Config
	var err error
	if f.kubeconfig == "" {
		cfg, err = rest.LoadDefault()
	} else {
		cfg, err = rest.ConfigFromKubeconfig(f.kubeconfig, "")
	}
	if err != nil {
		return fmt.Errorf("load kubeconfig: %w", err)
	}
	scheme, err := manager.NewScheme()
	if err != nil {
		return err
	}
	if err := application.AddToScheme(scheme); err != nil {
		return err
	}
	mgr, err := manager.New(manager.Options{
		Config:                  cfg,
		Scheme:                  scheme,
		MetricsAddr:             f.metricsAddr,
		HealthAddr:              f.healthAddr,
		LeaderElection:          f.leaderElect,
		LeaderElectionID:        application.DefaultName,
		LeaderElectionNamespace: f.leaseNS,
		Logger:                  log,
	})
	if err != nil {
		return err
	}
	defer mgr.Client().CloseIdleConnections()
	if err := application.Add(mgr, application.Options{MaxConcurrentReconciles: f.workers}); err != nil {
		return err
	}
	log.Info("starting application operator", "leaderElection", f.leaderElect, "workers", f.workers)
	go func() {
		select {
		case <-mgr.Elected():
			log.Info("application operator running", "metrics", mgr.MetricsAddr(), "health", mgr.HealthAddr())
		case <-ctx.Done():
		}
	}()
	return mgr.Start(ctx)
}
