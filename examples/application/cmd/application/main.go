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

	"github.com/setpoint-dev/setpoint/examples/application"
	"github.com/setpoint-dev/setpoint/manager"
)

func main() {
	f := manager.Flags{LeaderElectionNamespace: "default", MetricsAddr: manager.DefaultMetricsAddr, HealthAddr: manager.DefaultHealthAddr}
	f.Register(flag.CommandLine, application.DefaultName)
	workers := flag.Int("workers", application.DefaultWorkers, "number of concurrent reconciles")
	flag.Parse()

	log := f.Logger()
	ctx, stop := manager.SignalContext()
	defer stop()
	if err := run(ctx, &f, *workers, log); err != nil {
		log.Error("application operator failed", "err", err)
		os.Exit(1)
	}
	log.Info("application operator stopped")
}

func run(ctx context.Context, f *manager.Flags, workers int, log *slog.Logger) error {
	if workers <= 0 {
		return fmt.Errorf("--workers must be positive, got %d", workers)
	}
	opts, err := f.Options(application.DefaultName, log)
	if err != nil {
		return err
	}
	if opts.Scheme, err = manager.NewScheme(); err != nil {
		return err
	}
	if err := application.AddToScheme(opts.Scheme); err != nil {
		return err
	}
	mgr, err := manager.New(opts)
	if err != nil {
		return err
	}
	defer mgr.Client().CloseIdleConnections()
	if err := application.Add(mgr, application.Options{MaxConcurrentReconciles: workers}); err != nil {
		return err
	}
	log.Info("starting application operator", "leaderElection", f.LeaderElect, "workers", workers)
	go func() {
		select {
		case <-mgr.Elected():
			log.Info("application operator running", "metrics", mgr.MetricsAddr(), "health", mgr.HealthAddr())
		case <-ctx.Done():
		}
	}()
	return mgr.Start(ctx)
}
