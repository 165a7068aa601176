// Command autoservice runs the auto-service controller (package
// autoservice, seed 000's "完整 Controller 示例"): every Deployment
// annotated auto-service: "true" gets a ClusterIP Service named
// <deployment>-service, kept in shape until the annotation goes.
//
//	autoservice --kubeconfig .setpoint/kubeconfig --leader-elect --metrics-addr :8080
//
// It logs (slog, text) to stderr, serves /metrics on --metrics-addr and
// /healthz, /readyz on --health-addr ("0" turns either off), and stops
// cleanly on SIGINT or SIGTERM: in-flight reconciles finish, queued events
// are written, the leader Lease is released; the exit status is then 0.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/setpoint-dev/setpoint/examples/autoservice"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/rest"
)

type flags struct {
	kubeconfig    string
	leaderElect   bool
	leaseNS       string
	metricsAddr   string
	healthAddr    string
	workers       int
	verboseLogger bool
}

func main() {
	var f flags
	flag.StringVar(&f.kubeconfig, "kubeconfig", "", "path to a kubeconfig (default: $KUBECONFIG or ~/.kube/config)")
	flag.BoolVar(&f.leaderElect, "leader-elect", false, "hold the Lease auto-service before acting, so that one replica acts at a time")
	flag.StringVar(&f.leaseNS, "leader-elect-namespace", "default", "namespace of the leader-election Lease")
	flag.StringVar(&f.metricsAddr, "metrics-addr", manager.DefaultMetricsAddr, "address to serve /metrics on (\"0\": off)")
	flag.StringVar(&f.healthAddr, "health-addr", manager.DefaultHealthAddr, "address to serve /healthz and /readyz on (\"0\": off)")
	flag.IntVar(&f.workers, "workers", autoservice.DefaultWorkers, "number of concurrent reconciles")
	flag.BoolVar(&f.verboseLogger, "v", false, "log at debug level")
	flag.Parse()

	level := slog.LevelInfo
	if f.verboseLogger {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, f, log); err != nil {
		log.Error("autoservice failed", "err", err)
		os.Exit(1)
	}
	log.Info("autoservice stopped")
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
	mgr, err := manager.New(manager.Options{
		Config:                  cfg,
		MetricsAddr:             f.metricsAddr,
		HealthAddr:              f.healthAddr,
		LeaderElection:          f.leaderElect,
		LeaderElectionID:        autoservice.DefaultName,
		LeaderElectionNamespace: f.leaseNS,
		Logger:                  log,
	})
	if err != nil {
		return err
	}
	defer mgr.Client().CloseIdleConnections()
	if err := autoservice.Add(mgr, autoservice.Options{MaxConcurrentReconciles: f.workers}); err != nil {
		return err
	}
	log.Info("starting autoservice", "leaderElection", f.leaderElect, "workers", f.workers)
	go func() {
		select {
		case <-mgr.Elected():
			log.Info("autoservice controller running", "metrics", mgr.MetricsAddr(), "health", mgr.HealthAddr())
		case <-ctx.Done():
		}
	}()
	return mgr.Start(ctx)
}
