package main

import (
	"context"
	"errors"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/setpoint-dev/setpoint/internal/admission"
	"github.com/setpoint-dev/setpoint/internal/apiserver"
	"github.com/setpoint-dev/setpoint/internal/audit"
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
	audit                              audit.Options
	maxInflight, maxMutatingInflight   int
	enableAPF, profiling               bool
	enableAdmission, disableAdmission  []string
	notReadySeconds, unreachableSecs   int64
	requestHeader                      apiserver.RequestHeaderConfig
	proxyClientCert, proxyClientKey    string
	requestTimeout                     time.Duration
	minRequestTimeout                  int
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
	cmd.Flags().StringSliceVar(&f.enableAdmission, "enable-admission-plugins", nil, "admission plugins to enable besides the default ones ("+
		strings.Join(admission.DefaultOn(), ", ")+"), comma-separated; their order does not matter: the chain runs in kube-apiserver's order")
	cmd.Flags().StringSliceVar(&f.disableAdmission, "disable-admission-plugins", nil, "default admission plugins to disable, comma-separated")
	cmd.Flags().Int64Var(&f.notReadySeconds, "default-not-ready-toleration-seconds", 300, "the tolerationSeconds of the not-ready:NoExecute toleration the DefaultTolerationSeconds admission adds to every pod without one")
	cmd.Flags().Int64Var(&f.unreachableSecs, "default-unreachable-toleration-seconds", 300, "the tolerationSeconds of the unreachable:NoExecute toleration the DefaultTolerationSeconds admission adds to every pod without one")
	cmd.Flags().IntVar(&f.maxInflight, "max-requests-inflight", 400, "the maximum number of non-mutating requests in flight at a given time; with priority and fairness, this and --max-mutating-requests-inflight together are the server's total concurrency")
	cmd.Flags().IntVar(&f.maxMutatingInflight, "max-mutating-requests-inflight", 200, "the maximum number of mutating requests in flight at a given time; with priority and fairness, this and --max-requests-inflight together are the server's total concurrency")
	cmd.Flags().BoolVar(&f.enableAPF, "enable-priority-and-fairness", true, "if true, replace the max-in-flight handler with an enhanced one that queues and dispatches with priority and fairness")
	cmd.Flags().DurationVar(&f.requestTimeout, "request-timeout", time.Minute, "an optional field indicating the duration a handler must keep a request open before timing it out; the default for requests other than watches, which a request's ?timeout= may only shorten")
	cmd.Flags().IntVar(&f.minRequestTimeout, "min-request-timeout", 1800, "an optional field indicating the minimum number of seconds a handler must keep a request open before timing it out; currently only honored by the watch request handler, which picks a randomized value above this number as the connection timeout, to spread out load")
	cmd.Flags().BoolVar(&f.profiling, "profiling", true, "enable profiling via web interface host:port/debug/pprof/ (for identities RBAC allows the path, e.g. cluster-admin)")
	f.registerAudit(cmd)
	f.registerAggregation(cmd)
}

// registerAggregation adds kube-apiserver's front-proxy flags, with its
// defaults (`up` fills them with its own front-proxy credentials when they
// are not given).
func (f *apiFlags) registerAggregation(cmd *cobra.Command) {
	fs := cmd.Flags()
	rh := &f.requestHeader
	fs.StringVar(&rh.ClientCAFile, "requestheader-client-ca-file", "", "Root certificate bundle to use to verify client certificates on incoming requests before trusting usernames in headers specified by --requestheader-username-headers. WARNING: generally do not depend on authorization being already done for incoming requests.")
	fs.StringSliceVar(&rh.AllowedNames, "requestheader-allowed-names", nil, "List of client certificate common names to allow to provide usernames in headers specified by --requestheader-username-headers. If empty, any client certificate validated by the authorities in --requestheader-client-ca-file is allowed.")
	fs.StringSliceVar(&rh.UsernameHeaders, "requestheader-username-headers", nil, "List of request headers to inspect for usernames. X-Remote-User is common.")
	fs.StringSliceVar(&rh.UIDHeaders, "requestheader-uid-headers", nil, "List of request headers to inspect for UIDs. X-Remote-Uid is suggested.")
	fs.StringSliceVar(&rh.GroupHeaders, "requestheader-group-headers", nil, "List of request headers to inspect for groups. X-Remote-Group is suggested.")
	fs.StringSliceVar(&rh.ExtraHeaderPrefixes, "requestheader-extra-headers-prefix", nil, "List of request header prefixes to inspect. X-Remote-Extra- is suggested.")
	fs.StringVar(&f.proxyClientCert, "proxy-client-cert-file", "", "Client certificate used to prove the identity of the aggregator or kube-apiserver when it must call out during a request. This includes proxying requests to a user api-server and calling out to webhook admission plugins. It is expected that this cert includes a signature from the CA in the --requestheader-client-ca-file flag. That CA is published in the 'extension-apiserver-authentication' configmap in the kube-system namespace. Components receiving calls from kube-aggregator should use that CA to perform their half of the mutual TLS verification.")
	fs.StringVar(&f.proxyClientKey, "proxy-client-key-file", "", "Private key for the client certificate used to prove the identity of the aggregator or kube-apiserver when it must call out during a request. This includes proxying requests to a user api-server and calling out to webhook admission plugins.")
}

// registerAudit adds kube-apiserver's audit flags, with its defaults.
func (f *apiFlags) registerAudit(cmd *cobra.Command) {
	f.audit = audit.DefaultOptions()
	fs := cmd.Flags()
	fs.StringVar(&f.audit.PolicyFile, "audit-policy-file", "", "Path to the file that defines the audit policy configuration (audit.k8s.io/v1 Policy, YAML or JSON).")
	fs.StringVar(&f.audit.LogPath, "audit-log-path", "", "If set, all requests coming to the apiserver will be logged to this file.  '-' means standard out.")
	fs.IntVar(&f.audit.MaxAge, "audit-log-maxage", f.audit.MaxAge, "The maximum number of days to retain old audit log files based on the timestamp encoded in their filename. Setting a value of 0 means old audit log files are not removed based on age.")
	fs.IntVar(&f.audit.MaxBackup, "audit-log-maxbackup", f.audit.MaxBackup, "The maximum number of old audit log files to retain. Setting a value of 0 will mean there's no restriction on the number of files.")
	fs.IntVar(&f.audit.MaxSize, "audit-log-maxsize", f.audit.MaxSize, "The maximum size in megabytes of the audit log file before it gets rotated. Setting to 0 disables rotation (not recommended).")
	fs.BoolVar(&f.audit.Compress, "audit-log-compress", false, "If set, the rotated log files will be compressed using gzip.")
	fs.StringVar(&f.audit.Mode, "audit-log-mode", f.audit.Mode, "Strategy for sending audit events. Blocking indicates sending events should block server responses. Batch causes the backend to buffer and write events asynchronously. Known modes are batch,blocking,blocking-strict.")
	fs.IntVar(&f.audit.BatchBufferSize, "audit-log-batch-buffer-size", f.audit.BatchBufferSize, "The size of the buffer to store events before batching and writing. Only used in batch mode.")
}

// options turns the flags into control-plane options.
func (f *apiFlags) options() (controlplane.Options, error) {
	if f.dataDir == "" {
		return controlplane.Options{}, errors.New("--data-dir is required")
	}
	// kube-apiserver's checks and words.
	if f.requestTimeout < 0 {
		return controlplane.Options{}, errors.New("--request-timeout can not be negative value")
	}
	if f.minRequestTimeout < 0 {
		return controlplane.Options{}, errors.New("--min-request-timeout can not be negative value")
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
		AuthorizationModes: f.authorizationModes, Audit: f.audit,
		MaxRequestsInflight: f.maxInflight, MaxMutatingRequestsInflight: f.maxMutatingInflight,
		DisablePriorityAndFairness: !f.enableAPF, Profiling: f.profiling,
		EnableAdmissionPlugins: f.enableAdmission, DisableAdmissionPlugins: f.disableAdmission,
		DefaultNotReadyTolerationSeconds: f.notReadySeconds, DefaultUnreachableTolerationSeconds: f.unreachableSecs,
		RequestHeader: f.requestHeader, ProxyClientCertFile: f.proxyClientCert, ProxyClientKeyFile: f.proxyClientKey,
		RequestTimeout: f.requestTimeout, MinRequestTimeout: time.Duration(f.minRequestTimeout) * time.Second}, nil
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
