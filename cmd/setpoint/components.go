package main

import (
	"context"
	"errors"
	"fmt"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/setpoint-dev/setpoint/internal/cluster"
	"github.com/setpoint-dev/setpoint/internal/controllermanager"
	"github.com/setpoint-dev/setpoint/internal/pki"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/rest"
)

// commonFlags are the flags of every component run alone against a
// kubeconfig.
type commonFlags struct {
	kubeconfig, kubeContext, logLevel string
	metricsAddr, healthAddr           string
	leaderElect                       bool
	identity                          string
	leaseDuration, renewDeadline      time.Duration
	retryPeriod                       time.Duration
	qps                               float32
	burst                             int
}

// registerLimits adds --kube-api-qps and --kube-api-burst, as
// kube-controller-manager's and kube-scheduler's, with the component's
// defaults.
func (f *commonFlags) registerLimits(cmd *cobra.Command, qps float32, burst int) {
	cmd.Flags().Float32Var(&f.qps, "kube-api-qps", qps, "requests per second each client of the component may send to the API server (negative: no limit)")
	cmd.Flags().IntVar(&f.burst, "kube-api-burst", burst, "burst of requests each client of the component may send to the API server")
}

func (f *commonFlags) register(cmd *cobra.Command, election bool) {
	fl := cmd.Flags()
	fl.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig of the cluster (default: $KUBECONFIG or ~/.kube/config)")
	fl.StringVar(&f.kubeContext, "context", "", "kubeconfig context (default: the current one)")
	fl.StringVar(&f.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	fl.StringVar(&f.metricsAddr, "metrics-addr", "0", "address to serve /metrics on (\"0\": off)")
	fl.StringVar(&f.healthAddr, "health-addr", "0", "address to serve /healthz and /readyz on (\"0\": off)")
	if !election {
		return
	}
	fl.BoolVar(&f.leaderElect, "leader-elect", true, "hold a Lease in kube-system before acting, so that only one replica runs")
	fl.StringVar(&f.identity, "leader-elect-identity", "", "this replica's name in the Lease (default: host name and a random suffix)")
	fl.DurationVar(&f.leaseDuration, "leader-elect-lease-duration", 15*time.Second, "how long a Lease holds without renewal")
	fl.DurationVar(&f.renewDeadline, "leader-elect-renew-deadline", 10*time.Second, "how long the leader tries to renew before it gives up")
	fl.DurationVar(&f.retryPeriod, "leader-elect-retry-period", 2*time.Second, "how often candidates try to acquire or renew")
}

// common loads the kubeconfig and builds the component's common options.
func (f *commonFlags) common() (controllermanager.Common, error) {
	log, err := newLogger(f.logLevel)
	if err != nil {
		return controllermanager.Common{}, err
	}
	var cfg *rest.Config
	if f.kubeconfig != "" {
		cfg, err = rest.ConfigFromKubeconfig(f.kubeconfig, f.kubeContext)
	} else {
		cfg, err = rest.LoadDefault()
	}
	if err != nil {
		return controllermanager.Common{}, fmt.Errorf("load kubeconfig: %w", err)
	}
	return controllermanager.Common{
		Config: cfg, Logger: log, MetricsAddr: f.metricsAddr, HealthAddr: f.healthAddr, QPS: f.qps, Burst: f.burst,
		Election: controllermanager.Election{
			Disabled: !f.leaderElect, Identity: f.identity,
			LeaseDuration: f.leaseDuration, RenewDeadline: f.renewDeadline, RetryPeriod: f.retryPeriod,
		},
	}, nil
}

// runManager starts mgr until SIGINT or SIGTERM, logging when it leads.
func runManager(c controllermanager.Common, name string, mgr *manager.Manager) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	go func() {
		select {
		case <-mgr.Elected():
			c.Logger.Info("started", "component", name, "leading", !c.Election.Disabled)
		case <-ctx.Done():
		}
	}()
	err := mgr.Start(ctx)
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

func newControllerManagerCommand() *cobra.Command {
	var (
		f             commonFlags
		controllers   string
		tune          controllerFlags
		shard         controllermanager.Sharding
		saCredentials bool
	)
	cmd := &cobra.Command{
		Use:   "controller-manager",
		Short: "Run the controllers (replicaset, deployment, garbage collector, namespace, node lifecycle, service accounts, root CA, endpoints, endpointslices, mirroring, replicationcontroller) against a cluster",
		Args:  cobra.NoArgs,
		RunE: func(_ *cobra.Command, _ []string) error {
			common, err := f.common()
			if err != nil {
				return err
			}
			names, err := controllermanager.ParseControllers(controllers)
			if err != nil {
				return fmt.Errorf("--controllers: %w", err)
			}
			opts := controllermanager.ControllerManagerOptions{Common: common, Controllers: names, Sharding: shard,
				UseServiceAccountCredentials: saCredentials}
			if err := tune.apply(&opts); err != nil {
				return err
			}
			mgr, err := controllermanager.NewControllerManager(opts)
			if err != nil {
				return err
			}
			return runManager(common, "controller-manager", mgr)
		},
	}
	f.register(cmd, true)
	f.registerLimits(cmd, controllermanager.ControllerManagerQPS, controllermanager.ControllerManagerBurst)
	cmd.Flags().StringVar(&controllers, "controllers", "*", "comma-separated controllers to run, \"*\" for all")
	cmd.Flags().BoolVar(&saCredentials, "use-service-account-credentials", true,
		"run each controller as its own ServiceAccount in kube-system (created, with tokens from the TokenRequest API); "+
			"false: every controller uses the kubeconfig's identity")
	cmd.Flags().BoolVar(&shard.Enabled, "sharded", false, "run the replicaset and deployment controllers on every replica, "+
		"each owning the namespaces of its share of --shards shard Leases; the other controllers stay on the leader")
	cmd.Flags().IntVar(&shard.Shards, "shards", 32, "number of virtual shards of --sharded (the same on every replica)")
	tune.register(cmd)
	return cmd
}

func newSchedulerCommand() *cobra.Command {
	var f commonFlags
	cmd := &cobra.Command{
		Use:   "scheduler",
		Short: "Run the scheduler against a cluster",
		Args:  cobra.NoArgs,
		RunE: func(_ *cobra.Command, _ []string) error {
			common, err := f.common()
			if err != nil {
				return err
			}
			mgr, err := controllermanager.NewScheduler(controllermanager.SchedulerOptions{Common: common})
			if err != nil {
				return err
			}
			return runManager(common, "scheduler", mgr)
		},
	}
	f.register(cmd, true)
	f.registerLimits(cmd, controllermanager.SchedulerQPS, controllermanager.SchedulerBurst)
	return cmd
}

func newNodeCommand() *cobra.Command {
	var (
		f      commonFlags
		nodes  int
		tune   nodeFlags
		pkiDir string
	)
	cmd := &cobra.Command{
		Use:   "node",
		Short: "Run simulated nodes (registration, heartbeats, pod lifecycle) against a cluster",
		Args:  cobra.NoArgs,
		RunE: func(_ *cobra.Command, _ []string) error {
			common, err := f.common()
			if err != nil {
				return err
			}
			if nodes < 1 {
				return fmt.Errorf("--nodes must be at least 1, not %d", nodes)
			}
			opts := controllermanager.NodesOptions{Common: common}
			if err := tune.apply(&opts); err != nil {
				return err
			}
			opts.Agent.Count = nodes
			if pkiDir != "" {
				ca, err := pki.LoadCA(pkiDir)
				if err != nil {
					return fmt.Errorf("--pki-dir: %w", err)
				}
				opts.Agent.NodeCredentials = cluster.NodeCredentials(common.Config, ca)
			}
			mgr, err := controllermanager.NewNodes(opts)
			if err != nil {
				return err
			}
			return runManager(common, "node", mgr)
		},
	}
	f.register(cmd, false)
	cmd.Flags().IntVar(&nodes, "nodes", 1, "number of simulated nodes")
	cmd.Flags().StringVar(&pkiDir, "pki-dir", "", "directory holding the cluster CA (pki/ca.crt and pki/ca.key, the API server's data or --pki-dir): "+
		"each node then writes as system:node:<name> in system:nodes with a client certificate it signs; unset, the nodes write with the kubeconfig's identity")
	tune.register(cmd)
	return cmd
}
