package controlplane

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/setpoint-dev/setpoint/internal/admission/plugins"
	"github.com/setpoint-dev/setpoint/internal/apiserver"
	"github.com/setpoint-dev/setpoint/internal/audit"
	"github.com/setpoint-dev/setpoint/internal/registry/builtin"
	"github.com/setpoint-dev/setpoint/internal/registry/metrics"
	"github.com/setpoint-dev/setpoint/internal/scheme"
	"github.com/setpoint-dev/setpoint/internal/storage"
	"github.com/setpoint-dev/setpoint/internal/storage/boltdb"
	"github.com/setpoint-dev/setpoint/internal/storage/etcd"
	"github.com/setpoint-dev/setpoint/internal/storage/memory"
)

// Storage engines.
const (
	StorageBolt   = "bolt"
	StorageMemory = "memory"
	StorageEtcd   = "etcd"
)

// Options configure a control plane.
type Options struct {
	// DataDir holds the store, the credentials and the kubeconfig.
	DataDir string
	// Listen is host:port (port 0 picks one).
	Listen string
	// PKIDir holds credentials shared by several API servers (see
	// apiserver.Config.PKIDir); empty keeps them in DataDir.
	PKIDir string
	// AdvertiseAddress is the host clients use to reach this server (see
	// apiserver.Config.AdvertiseAddress).
	AdvertiseAddress string
	// Storage is StorageBolt (durable, the default), StorageMemory or
	// StorageEtcd.
	Storage string
	// EtcdEndpoints are the client URLs of every etcd member; required
	// with StorageEtcd, ignored otherwise.
	EtcdEndpoints []string
	// EtcdPrefix is prepended to every key in etcd, so that several
	// clusters can share one etcd. Empty means none.
	EtcdPrefix string
	Logger     *slog.Logger
	// MetricsAPI serves metrics.k8s.io (package registry/metrics), as a
	// cluster with metrics-server does; kube-apiserver alone does not.
	MetricsAPI bool
	// AuthorizationModes are kube-apiserver's --authorization-mode list
	// (see apiserver.Config.AuthorizationModes); empty means RBAC.
	AuthorizationModes []string
	// Audit configures auditing (kube-apiserver's --audit-* flags); the
	// zero value audits nothing.
	Audit audit.Options
	// MaxRequestsInflight and MaxMutatingRequestsInflight are
	// kube-apiserver's --max-requests-inflight and
	// --max-mutating-requests-inflight (0: 400 and 200); with priority and
	// fairness their sum is the server's seats.
	MaxRequestsInflight, MaxMutatingRequestsInflight int
	// DisablePriorityAndFairness is --enable-priority-and-fairness=false:
	// the plain in-flight limits instead of API Priority and Fairness.
	DisablePriorityAndFairness bool
	// Profiling is --profiling: /debug/pprof/ is served.
	Profiling bool
	// EnableAdmissionPlugins and DisableAdmissionPlugins are kube-apiserver's
	// --enable-admission-plugins and --disable-admission-plugins: the
	// admission chain is its default plugins, plus the enabled, minus the
	// disabled (package admission/plugins).
	EnableAdmissionPlugins, DisableAdmissionPlugins []string
	// DefaultNotReadyTolerationSeconds and
	// DefaultUnreachableTolerationSeconds are the tolerations the
	// DefaultTolerationSeconds admission gives pods (0: 300).
	DefaultNotReadyTolerationSeconds, DefaultUnreachableTolerationSeconds int64
	// RequestHeader, ProxyClientCertFile and ProxyClientKeyFile are
	// kube-apiserver's --requestheader-* and --proxy-client-* flags (see
	// apiserver.Config): front-proxy authentication, and the certificate
	// presented to aggregated API servers.
	RequestHeader                           apiserver.RequestHeaderConfig
	ProxyClientCertFile, ProxyClientKeyFile string
	// RequestTimeout and MinRequestTimeout are kube-apiserver's
	// --request-timeout and --min-request-timeout (see apiserver.Config;
	// 0: 1 minute and 30 minutes).
	RequestTimeout, MinRequestTimeout time.Duration
	// Tune lets tests adjust the API server configuration before start.
	Tune func(*apiserver.Config)
}

// OpenStorage opens the store named by opts.Storage: a bolt file inside
// opts.DataDir, memory, or etcd at opts.EtcdEndpoints.
func OpenStorage(opts Options) (storage.Store, error) {
	engine, dataDir, log := opts.Storage, opts.DataDir, opts.Logger
	if log == nil {
		log = slog.Default()
	}
	switch engine {
	case "", StorageBolt:
		dir := filepath.Join(dataDir, "db")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("create %s: %w", dir, err)
		}
		return boltdb.Open(filepath.Join(dir, "setpoint.db"), boltdb.Options{Logger: log})
	case StorageMemory:
		return memory.New(), nil
	case StorageEtcd:
		if len(opts.EtcdEndpoints) == 0 {
			return nil, fmt.Errorf("storage %s needs etcd endpoints", StorageEtcd)
		}
		return etcd.New(context.Background(), etcd.Options{Endpoints: opts.EtcdEndpoints, Prefix: opts.EtcdPrefix, Logger: log})
	}
	return nil, fmt.Errorf("unknown storage %q (want %s, %s or %s)", engine, StorageBolt, StorageMemory, StorageEtcd)
}

// NewAPIServer opens the store and builds the API server; Run starts it.
func NewAPIServer(opts Options) (*apiserver.Server, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	reg := prometheus.NewRegistry()
	chain, err := plugins.New(plugins.Options{Enable: opts.EnableAdmissionPlugins, Disable: opts.DisableAdmissionPlugins, Metrics: reg,
		NotReadyTolerationSeconds:    opts.DefaultNotReadyTolerationSeconds,
		UnreachableTolerationSeconds: opts.DefaultUnreachableTolerationSeconds})
	if err != nil {
		return nil, err
	}
	kv, err := OpenStorage(opts)
	if err != nil {
		return nil, err
	}
	auditor, err := audit.New(opts.Audit, opts.Logger)
	if err != nil {
		kv.Close()
		return nil, err
	}
	codecs := scheme.New()
	cfg := apiserver.Config{
		Audit:                      auditor,
		DataDir:                    opts.DataDir,
		Listen:                     opts.Listen,
		PKIDir:                     opts.PKIDir,
		AdvertiseAddress:           opts.AdvertiseAddress,
		Storage:                    kv,
		Resources:                  builtin.Resources(),
		Codecs:                     codecs,
		Logger:                     opts.Logger,
		AuthorizationModes:         opts.AuthorizationModes,
		MaxReadInFlight:            opts.MaxRequestsInflight,
		MaxMutatingInFlight:        opts.MaxMutatingRequestsInflight,
		DisablePriorityAndFairness: opts.DisablePriorityAndFairness,
		Profiling:                  opts.Profiling,
		Admission:                  chain,
		Metrics:                    reg,
		RequestHeader:              opts.RequestHeader,
		ProxyClientCertFile:        opts.ProxyClientCertFile,
		ProxyClientKeyFile:         opts.ProxyClientKeyFile,
		RequestTimeout:             opts.RequestTimeout,
		MinRequestTimeout:          opts.MinRequestTimeout,
	}
	if opts.MetricsAPI {
		cfg.Resources = append(cfg.Resources, metrics.Resources()...)
	}
	if opts.Tune != nil {
		opts.Tune(&cfg)
	}
	srv, err := apiserver.New(cfg)
	if err != nil {
		kv.Close()
		if auditor != nil {
			_ = auditor.Close(context.Background())
		}
		return nil, err
	}
	return srv, nil
}

// Run builds and runs the API server until ctx is cancelled.
func Run(ctx context.Context, opts Options) error {
	srv, err := NewAPIServer(opts)
	if err != nil {
		return err
	}
	return srv.Run(ctx)
}
