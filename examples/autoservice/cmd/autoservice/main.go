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

	"github.com/setpoint-dev/setpoint/examples/autoservice"
	"github.com/setpoint-dev/setpoint/manager"
)

func main() {
	f := manager.Flags{LeaderElectionNamespace: "default", MetricsAddr: manager.DefaultMetricsAddr, HealthAddr: manager.DefaultHealthAddr}
	f.Register(flag.CommandLine, autoservice.DefaultName)
	workers := flag.Int("workers", autoservice.DefaultWorkers, "number of concurrent reconciles")
	flag.Parse()

	log := f.Logger()
	ctx, stop := manager.SignalContext()
	defer stop()
	if err := run(ctx, &f, *workers, log); err != nil {
		log.Error("autoservice failed", "err", err)
		os.Exit(1)
	}
	log.Info("autoservice stopped")
}

func run(ctx context.Context, f *manager.Flags, workers int, log *slog.Logger) error {
	if workers <= 0 {
		return fmt.Errorf("--workers must be positive, got %d", workers)
	}
	opts, err := f.Options(autoservice.DefaultName, log)
	if err != nil {
		return err
	}
	mgr, err := manager.New(opts)
	if err != nil {
		return err
	}
	defer mgr.Client().CloseIdleConnections()
	if err := autoservice.Add(mgr, autoservice.Options{MaxConcurrentReconciles: workers}); err != nil {
		return err
	}
	log.Info("starting autoservice", "leaderElection", f.LeaderElect, "workers", workers)
	go func() {
		select {
		case <-mgr.Elected():
			log.Info("autoservice controller running", "metrics", mgr.MetricsAddr(), "health", mgr.HealthAddr())
		case <-ctx.Done():
		}
	}()
	return mgr.Start(ctx)
}
