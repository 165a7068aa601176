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
	"time"

	"github.com/setpoint-dev/setpoint/examples/statemachine"
	dbv1 "github.com/setpoint-dev/setpoint/examples/statemachine/api/v1"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/rest"
)

func main() {
	f := manager.Flags{LeaderElectionNamespace: "default", MetricsAddr: "0", HealthAddr: "0"}
	f.Register(flag.CommandLine, "default/"+statemachine.DefaultName)
	var opts statemachine.Options
	installCRD := flag.Bool("install-crd", false, "create or update the CRD "+statemachine.CRDName+" and wait until it is established")
	flag.IntVar(&opts.MaxConcurrentReconciles, "workers", statemachine.DefaultWorkers, "number of concurrent reconciles")
	flag.DurationVar(&opts.ProvisionTime, "provision-time", statemachine.DefaultProvisionTime, "how long the simulated provisioning takes")
	flag.DurationVar(&opts.UpdateTime, "update-time", statemachine.DefaultUpdateTime, "how long the simulated update takes")
	flag.DurationVar(&opts.TeardownTime, "teardown-time", statemachine.DefaultTeardownTime, "how long the simulated teardown takes")
	flag.DurationVar(&opts.RetryBaseDelay, "retry-base-delay", statemachine.DefaultRetryBaseDelay, "wait in Failed before the first retry (doubling per failure)")
	flag.DurationVar(&opts.RetryMaxDelay, "retry-max-delay", statemachine.DefaultRetryMaxDelay, "longest wait in Failed before a retry")
	flag.Parse()

	log := f.Logger()
	ctx, stop := manager.SignalContext()
	defer stop()
	if err := run(ctx, &f, *installCRD, opts, log); err != nil {
		log.Error("statemachine failed", "err", err)
		os.Exit(1)
	}
	log.Info("statemachine stopped")
}

func run(ctx context.Context, f *manager.Flags, installCRD bool, opts statemachine.Options, log *slog.Logger) error {
	if opts.MaxConcurrentReconciles <= 0 {
		return fmt.Errorf("--workers must be positive, got %d", opts.MaxConcurrentReconciles)
	}
	mopts, err := f.Options(statemachine.DefaultName, log)
	if err != nil {
		return err
	}
	if installCRD {
		c, err := rest.New(mopts.Config)
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
	if mopts.Scheme, err = manager.NewScheme(); err != nil {
		return err
	}
	if err := dbv1.AddToScheme(mopts.Scheme); err != nil {
		return err
	}
	mgr, err := manager.New(mopts)
	if err != nil {
		return err
	}
	defer mgr.Client().CloseIdleConnections()
	if err := statemachine.Add(mgr, opts); err != nil {
		return err
	}
	log.Info("starting statemachine", "provisionTime", opts.ProvisionTime, "updateTime", opts.UpdateTime,
		"teardownTime", opts.TeardownTime, "retryBaseDelay", opts.RetryBaseDelay)
	go func() {
		select {
		case <-mgr.Elected():
			log.Info("statemachine controller running")
		case <-ctx.Done():
		}
	}()
	return mgr.Start(ctx)
}
