package controlplane

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/setpoint-dev/setpoint/internal/apiserver"
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
	kv, err := OpenStorage(opts)
	if err != nil {
		return nil, err
	}
	codecs := scheme.New()
	cfg := apiserver.Config{
		DataDir:          opts.DataDir,
		Listen:           opts.Listen,
		PKIDir:           opts.PKIDir,
		AdvertiseAddress: opts.AdvertiseAddress,
		Storage:          kv,
		Resources:        builtin.Resources(),
		Codecs:           codecs,
		Logger:           opts.Logger,

		AuthorizationModes: opts.AuthorizationModes,
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
