package apiserver

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/clock"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/setpoint-dev/setpoint/internal/admission"
	"github.com/setpoint-dev/setpoint/internal/admission/plugins"
	"github.com/setpoint-dev/setpoint/internal/aggregator"
	"github.com/setpoint-dev/setpoint/internal/audit"
	"github.com/setpoint-dev/setpoint/internal/authorizer"
	nodeauthz "github.com/setpoint-dev/setpoint/internal/authorizer/node"
	rbacauthz "github.com/setpoint-dev/setpoint/internal/authorizer/rbac"
	"github.com/setpoint-dev/setpoint/internal/discovery"
	"github.com/setpoint-dev/setpoint/internal/fieldmanager"
	"github.com/setpoint-dev/setpoint/internal/flowcontrol"
	"github.com/setpoint-dev/setpoint/internal/objects"
	"github.com/setpoint-dev/setpoint/internal/openapi"
	"github.com/setpoint-dev/setpoint/internal/pki"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/scheme"
	"github.com/setpoint-dev/setpoint/internal/serviceaccount"
	"github.com/setpoint-dev/setpoint/internal/storage"
	"github.com/setpoint-dev/setpoint/internal/watchcache"
	"github.com/setpoint-dev/setpoint/internal/webhookclient"
)

// Config configures a Server. Zero values take Kubernetes' defaults.
type Config struct {
	// DataDir holds the credentials and the kubeconfig (required).
	DataDir string
	// PKIDir, when set, holds the cluster credentials shared by several
	// API servers instead of DataDir: the CA, the tokens and the list of
	// servers (see pki.LoadShared and pki.RegisterServer). The first server
	// creates them; the others load them. Each server still issues its own
	// serving certificate (in DataDir) from the shared CA, and writes the
	// admin kubeconfig, listing every registered server, to DataDir and to
	// PKIDir.
	PKIDir string
	// AdvertiseAddress is the host (name or IP) clients use to reach this
	// server: it goes into the kubeconfig and the serving certificate.
	// Empty means the listen host, or 127.0.0.1 when that is a wildcard.
	AdvertiseAddress string
	// Listen is host:port; port 0 picks a free port.
	Listen string
	// Storage is the opened store (required); the server closes it.
	Storage storage.Store
	// Resources are the served resources (required).
	Resources []*registry.Resource
	// Codecs of the resources' scheme (required).
	Codecs *scheme.Codecs
	Logger *slog.Logger
	// MaxReadInFlight and MaxMutatingInFlight (kube-apiserver's
	// --max-requests-inflight and --max-mutating-requests-inflight,
	// defaults 400 and 200): with priority and fairness their sum is the
	// seats the priority levels share; without it they bound concurrent
	// read and mutating requests.
	MaxReadInFlight, MaxMutatingInFlight int
	// DisablePriorityAndFairness turns API Priority and Fairness off
	// (kube-apiserver's --enable-priority-and-fairness=false): the plain
	// in-flight limits apply instead.
	DisablePriorityAndFairness bool
	// Profiling serves Go's runtime profiles at /debug/pprof/
	// (kube-apiserver's --profiling), to identities allowed the path.
	Profiling bool
	// MaxBodyBytes bounds request bodies (default 3 MiB).
	MaxBodyBytes int64
	// RequestTimeout bounds non-watch requests (default 60 s;
	// kube-apiserver's --request-timeout).
	RequestTimeout time.Duration
	// MinRequestTimeout is the shortest time a watch without timeoutSeconds
	// is kept open; each such watch gets a random timeout between it and
	// twice it, so that watches end spread out (default 30 minutes;
	// kube-apiserver's --min-request-timeout).
	MinRequestTimeout time.Duration
	// CompactionInterval is how often history is compacted, to the revision
	// seen one interval earlier (default 5 minutes, as Kubernetes compacts
	// etcd). Negative disables compaction.
	CompactionInterval time.Duration
	// WatchCacheCapacity is each resource's event window (default 10,000).
	WatchCacheCapacity int
	// BookmarkInterval is the period of watch bookmarks (default 1 minute).
	BookmarkInterval time.Duration
	// Clock drives timestamps and timers; nil means the real clock.
	Clock clock.WithTicker
	// AuthorizationModes are kube-apiserver's --authorization-mode, in
	// order: AlwaysAllow, AlwaysDeny, RBAC (default DefaultAuthorizationModes).
	// Members of system:masters are allowed before any mode is asked.
	AuthorizationModes []string
	// Authorizer, when set, replaces the authorizer built from
	// AuthorizationModes: it decides every request and answers the hooks
	// that ask (registry.Env.Authorizer).
	Authorizer authorizer.Authorizer
	// Audit, when set, writes the audit events its policy asks for
	// (audit.go); the server closes it when it stops, after the last
	// request. nil: no auditing (the Audit-Id header is still sent).
	Audit *audit.Auditor
	// Metrics is the registry /metrics serves, on which the server
	// registers its collectors; nil means a new one. The control plane
	// shares it with what it builds beside the server (admission plugins).
	Metrics *prometheus.Registry
	// Admission is the admission chain every write runs through (package
	// admission); nil means kube-apiserver's default plugins
	// (plugins.Default).
	Admission *admission.Chain
	// RequestHeader configures the front-proxy authentication
	// (kube-apiserver's --requestheader-* flags, requestheader.go): the
	// requests a front proxy makes on behalf of users, and what the
	// kube-system/extension-apiserver-authentication ConfigMap tells
	// aggregated API servers. Zero: none.
	RequestHeader RequestHeaderConfig
	// ProxyClientCertFile and ProxyClientKeyFile are the client
	// certificate presented to aggregated API servers (kube-apiserver's
	// --proxy-client-cert-file, --proxy-client-key-file); empty: none.
	ProxyClientCertFile, ProxyClientKeyFile string
	// AggregatorResyncInterval is how often every APIService with a
	// service is checked without a change (default 30 s).
	AggregatorResyncInterval time.Duration
}

func (c *Config) setDefaults() {
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Listen == "" {
		c.Listen = "127.0.0.1:6443"
	}
	if c.MaxReadInFlight <= 0 {
		c.MaxReadInFlight = 400
	}
	if c.MaxMutatingInFlight <= 0 {
		c.MaxMutatingInFlight = 200
	}
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.RequestTimeout <= 0 {
		c.RequestTimeout = time.Minute
	}
	if c.MinRequestTimeout <= 0 {
		c.MinRequestTimeout = 30 * time.Minute
	}
	if c.CompactionInterval == 0 {
		c.CompactionInterval = 5 * time.Minute
	}
	if c.Clock == nil {
		c.Clock = clock.RealClock{}
	}
	if len(c.AuthorizationModes) == 0 {
		c.AuthorizationModes = DefaultAuthorizationModes
	}
	if c.Admission == nil {
		c.Admission = plugins.Default()
	}
}

// entry is one served resource with its object layer and watch cache.
type entry struct {
	res   *registry.Resource
	store *objects.Store
	cache *watchcache.Cache
	// fields are the field-selector fields the resource supports.
	fields fields.Set
	// fm tracks managedFields and merges server-side apply (fieldmanager.go).
	fm *fieldmanager.Resource
	// stopCache ends the watch cache; nil until it runs.
	stopCache context.CancelFunc
	// crd is the state of the CustomResourceDefinition serving a custom
	// resource (crd.go); nil for built-in resources.
	crd *crdState
}

func (e *entry) gr() schema.GroupResource {
	return schema.GroupResource{Group: e.res.Group, Resource: e.res.Resource}
}

// Server is one API server.
type Server struct {
	cfg     Config
	log     *slog.Logger
	codecs  *scheme.Codecs
	resp    *responder
	metrics *metrics
	tokens  *pki.Tokens
	ca      *pki.CA
	admin   string // the admin bearer token
	// table holds the served resources (resources.go).
	table resourceTable
	// crds serves the resources of CustomResourceDefinitions (crd.go).
	crds *crdController
	// disc and oapi serve discovery and OpenAPI documents; the table
	// updates them when custom resources come and go.
	disc    *discovery.Handler
	oapi    *openapi.Service
	handler http.Handler
	// nodeTransport reaches node (kubelet) endpoints with the server's
	// client certificate.
	nodeTransport http.RoundTripper
	// tokenIssuer signs and verifies service-account tokens.
	tokenIssuer *serviceaccount.Issuer
	// impersonation decides who a request may act as (impersonation.go).
	impersonation *impersonator
	// proxyTransport reaches pods and services (pods/proxy,
	// services/proxy).
	proxyTransport http.RoundTripper
	// authz decides every request (authorization.go); rbac is its RBAC
	// authorizer, fed from the watch caches, nil without mode RBAC.
	authz authorizer.Authorizer
	rbac  *rbacauthz.Authorizer
	// nodeGraph is the Node authorizer's graph (nil without mode Node),
	// fed from the watch caches.
	nodeGraph *nodeauthz.Graph
	// agg proxies and checks the APIServices with a service (aggregation.go);
	// nil when APIServices are not served.
	agg *aggregator.Aggregator
	// requestHeader authenticates front-proxy requests (requestheader.go);
	// nil without RequestHeader.ClientCAFile.
	requestHeader *requestHeaderAuthenticator

	readLimit, mutatingLimit inflightLimiter
	// apf is API Priority and Fairness (flowcontrol.go); nil when
	// disabled.
	apf *flowcontrol.Controller
	// ready is closed once the caches are synced and the kubeconfig is
	// written; readyz answers 200 from then on.
	ready     chan struct{}
	readyOnce sync.Once
	addr      atomic.Value // string: the bound address
	// watchWriters pools the buffers of watch responses (watchstream.go).
	watchWriters watchWriters
	// startedWatches tracks watch handlers so shutdown can end them.
	watchCtx    context.Context
	cancelWatch context.CancelFunc
}

// New builds a server; Run starts it.
func New(cfg Config) (*Server, error) {
	cfg.setDefaults()
	azs := authorizers{authz: cfg.Authorizer}
	if azs.authz == nil {
		var err error
		if azs, err = buildAuthorizer(cfg.AuthorizationModes); err != nil {
			return nil, err
		}
	}
	if cfg.DataDir == "" || cfg.Storage == nil || cfg.Codecs == nil || len(cfg.Resources) == 0 {
		return nil, errors.New("apiserver: DataDir, Storage, Codecs and Resources are required")
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("create data dir: %w", err)
	}
	ca, tokens, admin, err := loadCredentials(cfg)
	if err != nil {
		return nil, err
	}
	s := &Server{
		cfg: cfg, log: cfg.Logger, codecs: cfg.Codecs, ca: ca, tokens: tokens, admin: admin,
		resp:          &responder{codecs: cfg.Codecs, log: cfg.Logger},
		metrics:       newMetrics(cfg.Metrics),
		readLimit:     make(inflightLimiter, cfg.MaxReadInFlight),
		mutatingLimit: make(inflightLimiter, cfg.MaxMutatingInFlight),
		ready:         make(chan struct{}),
	}
	if cfg.Audit != nil {
		s.metrics.registry.MustRegister(cfg.Audit.Collectors()...)
	}
	if s.nodeTransport, err = newNodeTransport(cfg.DataDir, ca); err != nil {
		return nil, err
	}
	if s.tokenIssuer, err = newTokenIssuer(cfg); err != nil {
		return nil, err
	}
	s.proxyTransport = newProxyTransport()
	s.authz, s.rbac, s.nodeGraph = azs.authz, azs.rbac, azs.graph
	s.impersonation = &impersonator{authz: func() authorizer.Authorizer { return s.authz }}
	if !cfg.DisablePriorityAndFairness {
		s.apf = newFlowControl(cfg, s.metrics)
	}
	s.watchCtx, s.cancelWatch = context.WithCancel(context.Background())
	s.table.builtin = cfg.Resources
	reviews, err := conversionCodec()
	if err != nil {
		return nil, err
	}
	s.crds = &crdController{s: s, installed: map[string]*crdState{}, webhooks: webhookclient.New(webhookclient.Options{}), reviewCodec: reviews}
	entries := entryMap{}
	for _, res := range cfg.Resources {
		e, err := s.newEntry(res)
		if err != nil {
			return nil, err
		}
		entries[res.GVR()] = e
	}
	s.table.current.Store(&entries)
	if err := s.newDocuments(); err != nil {
		return nil, err
	}
	if err := s.initFieldManagers(s.oapi.Schemas()); err != nil {
		return nil, err
	}
	if err := s.newAggregator(); err != nil {
		return nil, err
	}
	if s.requestHeader, err = newRequestHeaderAuthenticator(cfg.RequestHeader); err != nil {
		return nil, err
	}
	s.handler = s.buildHandler()
	return s, nil
}

// Addr returns the bound address once Run is listening ("" before).
func (s *Server) Addr() string {
	a, _ := s.addr.Load().(string)
	return a
}

// Ready is closed when the server is serving and its kubeconfig written.
func (s *Server) Ready() <-chan struct{} { return s.ready }

// KubeconfigPath is where the admin kubeconfig is written.
func (s *Server) KubeconfigPath() string { return filepath.Join(s.cfg.DataDir, "kubeconfig") }

// AdminToken returns the admin bearer token.
func (s *Server) AdminToken() string { return s.admin }

// CA returns the cluster CA.
func (s *Server) CA() *pki.CA { return s.ca }

// http2MaxStreams is the most concurrent streams a client may open on one
// HTTP/2 connection: 100, kube-apiserver's (its default
// --http2-max-streams-per-connection, chosen to match Go's client). Go's
// HTTP/2 server writes every frame of a connection from that connection's
// one serving goroutine, scanning the connection's streams for the next
// frame to write: with 1,000 streams allowed, client-go put 500 watches
// on one connection, and an event's 500 deliveries queued behind one
// goroutine on one core and a scan of 500 streams per frame. At 100 a
// client opens a connection per 100 streams, as it does with kube-apiserver,
// and deliveries go out on several connections at once.
const http2MaxStreams = 100

// http2MaxBodyFrame is the stream window and the largest frame the server
// reads, as kube-apiserver announces them (256 KiB, "most API POST
// requests in a single frame", instead of Go's 1 MiB).
const http2MaxBodyFrame = 256 << 10

// Run serves until ctx is cancelled, then shuts down gracefully and closes
// the store.
func (s *Server) Run(ctx context.Context) error {
	defer s.cfg.Storage.Close()
	ln, err := net.Listen("tcp", s.cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", s.cfg.Listen, err)
	}
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	s.addr.Store(ln.Addr().String())
	cert, err := s.ca.EnsureServing(s.cfg.DataDir, servingHosts(host, s.cfg.AdvertiseAddress))
	if err != nil {
		ln.Close()
		return err
	}
	srv := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       90 * time.Second,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
		TLSConfig: &tls.Config{
			Certificates: []tls.Certificate{cert},
			ClientAuth:   tls.VerifyClientCertIfGiven,
			ClientCAs:    s.clientCAs(),
			MinVersion:   tls.VersionTLS12,
		},
		HTTP2: &http.HTTP2Config{MaxConcurrentStreams: http2MaxStreams,
			MaxReceiveBufferPerStream: http2MaxBodyFrame, MaxReadFrameSize: http2MaxBodyFrame},
	}
	cacheCtx, stopCaches := context.WithCancel(context.Background())
	s.table.startCaches(cacheCtx)
	if s.rbac != nil {
		s.feedRBAC(cacheCtx, s.rbac)
	}
	if s.nodeGraph != nil {
		s.feedNodeGraph(cacheCtx, s.nodeGraph)
	}
	defer func() { stopCaches(); s.table.caches.Wait() }()
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.ServeTLS(ln, "", "") }()
	// The background loops stop (and are waited for) before the caches
	// stop and the store closes: deferred calls run in reverse order.
	loopCtx, stopLoops := context.WithCancel(ctx)
	var loops sync.WaitGroup
	defer func() { stopLoops(); loops.Wait() }()
	if err := s.start(ctx, host, port); err != nil {
		srv.Close()
		return err
	}
	adv, advertised := s.advertisement(host, port)
	keepAdvertised := func(ctx context.Context) {
		if advertised {
			s.advertisedLoop(ctx, adv)
		}
	}
	for _, loop := range []func(context.Context){s.compactLoop, s.storageMetricsLoop, s.crds.run, keepAdvertised, s.flowControlLoop, s.runAggregator} {
		loops.Add(1)
		go func() { defer loops.Done(); loop(loopCtx) }()
	}
	s.log.Info("API server ready", "address", s.Addr(), "kubeconfig", s.KubeconfigPath())
	select {
	case err := <-serveErr:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	s.cancelWatch()
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		srv.Close()
	}
	s.crds.webhooks.Close()
	if s.cfg.Audit != nil {
		if err := s.cfg.Audit.Close(shutdownCtx); err != nil {
			s.log.Error("closing the audit log", "err", err)
		}
	}
	return nil
}

// start waits for the caches, bootstraps the system objects, writes the
// kubeconfig and marks the server ready.
func (s *Server) start(ctx context.Context, host, port string) error {
	for _, e := range s.table.load() {
		if e.cache == nil {
			continue
		}
		if err := e.cache.WaitReady(ctx); err != nil {
			return fmt.Errorf("watch cache %s: %w", e.res.GVR(), err)
		}
	}
	if s.rbac != nil {
		select {
		case <-s.rbac.Synced():
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if err := s.bootstrap(ctx); err != nil {
		return fmt.Errorf("bootstrap: %w", err)
	}
	if err := s.ensureFlowControlConfig(ctx); err != nil {
		return fmt.Errorf("bootstrap: %w", err)
	}
	if err := s.ensureAuthenticationConfigMap(ctx); err != nil {
		return fmt.Errorf("bootstrap: %w", err)
	}
	if adv, ok := s.advertisement(host, port); ok {
		if err := s.reconcileAdvertised(ctx, adv); err != nil {
			return fmt.Errorf("bootstrap: %w", err)
		}
	}
	if s.entry(crdGVR) != nil {
		// Serve the custom resources of existing CRDs before reporting
		// ready; a CRD that fails here is retried by the controller.
		if _, err := s.crds.sync(ctx); err != nil {
			s.log.Warn("serving custom resources", "err", err)
		}
	}
	// The storage gauges exist once the server is ready; the loop started
	// after start keeps them current.
	s.refreshStorageMetrics(ctx)
	if err := s.writeKubeconfigs(host, port); err != nil {
		return err
	}
	s.readyOnce.Do(func() { close(s.ready) })
	return nil
}

func servingHosts(host, advertise string) []string {
	hosts := []string{"localhost", "127.0.0.1", "::1"}
	for _, h := range []string{host, advertise} {
		if h != "" && h != "0.0.0.0" && h != "::" && !slices.Contains(hosts, h) {
			hosts = append(hosts, h)
		}
	}
	if h, err := os.Hostname(); err == nil {
		hosts = append(hosts, h)
	}
	return hosts
}

// objectMeta returns obj's metadata; every served kind has ObjectMeta, so
// a failure is a programming error.
func objectMeta(obj runtime.Object) metav1.Object {
	m, err := meta.Accessor(obj)
	if err != nil {
		panic(err)
	}
	return m
}
