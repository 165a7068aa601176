// Command statemachine runs the Database state-machine controller
// (package statemachine, seed 004 §6.3) against a cluster:
//
//	kubectl apply -f examples/statemachine/crd.yaml
//	statemachine --kubeconfig .setpoint/kubeconfig
//
// --install-crd creates (or updates) the CRD itself and waits until it is
// established. It logs (slog, text) to stderr, one "phase changed" line
// per transition, serves /metrics on --metrics-addr and /healthz, /readyz
// on --health-addr ("0" turns either off), and stops cleanly on SIGINT or
// SIGTERM with exit status 0.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/setpoint-dev/setpoint/examples/statemachine"
	dbv1 "github.com/setpoint-dev/setpoint/examples/statemachine/api/v1"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/rest"
)

type flags struct {
	kubeconfig  string
	installCRD  bool
	leaderElect bool
	metricsAddr string
	healthAddr  string
	verbose     bool
	opts        statemachine.Options
}

func main() {
	var f flags
	flag.StringVar(&f.kubeconfig, "kubeconfig", "", "path to a kubeconfig (default: $KUBECONFIG or ~/.kube/config)")
	flag.BoolVar(&f.installCRD, "install-crd", false, "create or update the CRD "+statemachine.CRDName+" and wait until it is established")
	flag.BoolVar(&f.leaderElect, "leader-elect", false, "hold the Lease default/"+statemachine.DefaultName+" before acting")
	flag.StringVar(&f.metricsAddr, "metrics-addr", "0", "address to serve /metrics on (\"0\": off)")
	flag.StringVar(&f.healthAddr, "health-addr", "0", "address to serve /healthz and /readyz on (\"0\": off)")
	flag.IntVar(&f.opts.MaxConcurrentReconciles, "workers", statemachine.DefaultWorkers, "number of concurrent reconciles")
	flag.DurationVar(&f.opts.ProvisionTime, "provision-time", statemachine.DefaultProvisionTime, "how long the simulated provisioning takes")
	flag.DurationVar(&f.opts.UpdateTime, "update-time", statemachine.DefaultUpdateTime, "how long the simulated update takes")
	flag.DurationVar(&f.opts.TeardownTime, "teardown-time", statemachine.DefaultTeardownTime, "how long the simulated teardown takes")
	flag.DurationVar(&f.opts.RetryBaseDelay, "retry-base-delay", statemachine.DefaultRetryBaseDelay, "wait in Failed before the first retry (doubling per failure)")
	flag.DurationVar(&f.opts.RetryMaxDelay, "retry-max-delay", statemachine.DefaultRetryMaxDelay, "longest wait in Failed before a retry")
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
		log.Error("statemachine failed", "err", err)
		os.Exit(1)
	}
	log.Info("statemachine stopped")
}

func run(ctx context.Context, f flags, log *slog.Logger) error {
	if f.opts.MaxConcurrentReconciles <= 0 {
		return fmt.Errorf("--workers must be positive, got %d", f.opts.MaxConcurrentReconciles)
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
	if f.installCRD {
		c, err := rest.New(cfg)
		if err != nil {
			return err
		}
		err = statemachine.InstallCRD(ctx, c, time.Minute)
		c.CloseIdleConnections()
		if err != nil {
			return err
		}
		log.Info("CRD established", "crd", statemachine.CRDName)
	}
	scheme, err := manager.NewScheme()
	if err != nil {
		return err
	}
	if err := dbv1.AddToScheme(scheme); err != nil {
		return err
	}
	mgr, err := manager.New(manager.Options{Config: cfg, Scheme: scheme, MetricsAddr: f.metricsAddr, HealthAddr: f.healthAddr,
		LeaderElection: f.leaderElect, LeaderElectionID: statemachine.DefaultName, Logger: log})
	if err != nil {
		return err
	}
	defer mgr.Client().CloseIdleConnections()
	if err := statemachine.Add(mgr, f.opts); err != nil {
		return err
	}
	log.Info("starting statemachine", "provisionTime", f.opts.ProvisionTime, "updateTime", f.opts.UpdateTime,
		"teardownTime", f.opts.TeardownTime, "retryBaseDelay", f.opts.RetryBaseDelay)
	go func() {
		select {
		case <-mgr.Elected():
			log.Info("statemachine controller running")
		case <-ctx.Done():
		}
	}()
	return mgr.Start(ctx)
}
