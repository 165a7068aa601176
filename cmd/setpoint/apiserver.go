package main

import (
	"context"
	"errors"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/setpoint-dev/setpoint/internal/apiserver"
	"github.com/setpoint-dev/setpoint/internal/controlplane"
)

// apiFlags are the API server's flags, shared by `apiserver` and `up`.
type apiFlags struct {
	dataDir, listen, storage, logLevel string
	etcdEndpoints                      []string
	etcdPrefix                         string
	pkiDir, advertiseAddress           string
	metricsAPI                         bool
	authorizationModes                 []string
}

// register adds the flags; a whole cluster (`up`, defaultDir set) serves
// the resource metrics API by default, a bare API server does not, as
// kube-apiserver alone does not.
func (f *apiFlags) register(cmd *cobra.Command, defaultDir string) {
	cmd.Flags().BoolVar(&f.metricsAPI, "metrics-api", defaultDir != "", "serve metrics.k8s.io (NodeMetrics, PodMetrics for kubectl top and the HorizontalPodAutoscaler), scraped from the nodes as metrics-server scrapes them")
	cmd.Flags().StringVar(&f.dataDir, "data-dir", defaultDir, "directory for the store, credentials and kubeconfig")
	cmd.Flags().StringVar(&f.listen, "listen", "127.0.0.1:6443", "address to serve HTTPS on (host:port; port 0 picks a free one)")
	cmd.Flags().StringVar(&f.storage, "storage", controlplane.StorageBolt, "storage engine: bolt (durable, default), memory or etcd")
	cmd.Flags().StringSliceVar(&f.etcdEndpoints, "etcd-endpoints", nil, "with --storage etcd: client URLs of every etcd member (comma-separated)")
	cmd.Flags().StringVar(&f.etcdPrefix, "etcd-prefix", "", "with --storage etcd: prefix of every key, so that clusters can share an etcd")
	cmd.Flags().StringVar(&f.pkiDir, "pki-dir", "", "directory of credentials shared by several API servers of one cluster: CA, tokens, server list and a kubeconfig naming every server (created by the first server; default: kept in --data-dir)")
	cmd.Flags().StringVar(&f.advertiseAddress, "advertise-address", "", "host name or IP clients use to reach this server: written to the kubeconfig and the serving certificate (default: the --listen host, or 127.0.0.1 for a wildcard)")
	cmd.Flags().StringSliceVar(&f.authorizationModes, "authorization-mode", apiserver.DefaultAuthorizationModes, "ordered list of plug-ins to do authorization on the secure port, comma-separated: AlwaysAllow, AlwaysDeny, Node, RBAC (members of system:masters are always allowed)")
	cmd.Flags().StringVar(&f.logLevel, "log-level", "info", "log level: debug, info, warn or error")
}

// options turns the flags into control-plane options.
func (f *apiFlags) options() (controlplane.Options, error) {
	if f.dataDir == "" {
		return controlplane.Options{}, errors.New("--data-dir is required")
	}
	dir, err := filepath.Abs(f.dataDir)
	if err != nil {
		return controlplane.Options{}, err
	}
	pkiDir := f.pkiDir
	if pkiDir != "" {
		if pkiDir, err = filepath.Abs(pkiDir); err != nil {
			return controlplane.Options{}, err
		}
	}
	return controlplane.Options{DataDir: dir, Listen: f.listen, Storage: f.storage,
		EtcdEndpoints: f.etcdEndpoints, EtcdPrefix: f.etcdPrefix,
		PKIDir: pkiDir, AdvertiseAddress: f.advertiseAddress, MetricsAPI: f.metricsAPI,
		AuthorizationModes: f.authorizationModes}, nil
}

func newAPIServerCommand() *cobra.Command {
	var f apiFlags
	cmd := &cobra.Command{
		Use:   "apiserver",
		Short: "Run the API server only",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := newLogger(f.logLevel)
			if err != nil {
				return err
			}
			opts, err := f.options()
			if err != nil {
				return err
			}
			opts.Logger = log
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			srv, err := controlplane.NewAPIServer(opts)
			if err != nil {
				return err
			}
			return srv.Run(ctx)
		},
	}
	f.register(cmd, "")
	return cmd
}
