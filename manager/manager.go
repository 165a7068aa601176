package manager

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/clock"

	"github.com/setpoint-dev/setpoint/controller"
	"github.com/setpoint-dev/setpoint/informer"
	"github.com/setpoint-dev/setpoint/leaderelection"
	"github.com/setpoint-dev/setpoint/record"
	"github.com/setpoint-dev/setpoint/rest"
	"github.com/setpoint-dev/setpoint/webhook"
	"github.com/setpoint-dev/setpoint/workqueue"
)

// Defaults of Options.
const (
	DefaultMetricsAddr             = ":8080"
	DefaultHealthAddr              = ":8081"
	DefaultCacheSyncTimeout        = 2 * time.Minute
	DefaultGracefulShutdownTimeout = 30 * time.Second
)

// Options configure a Manager. The zero value of every field but Config
// selects the documented default.
type Options struct {
	// Config reaches the API server (required).
	Config *rest.Config
	// Scheme maps Go types to kinds; default NewScheme(). It is the one
	// scheme of the manager: its client (rest), informers, builder and
	// Client encode, decode and name kinds with it, so your own Go types
	// need only their AddToScheme applied to it.
	Scheme *runtime.Scheme
	// MetricsAddr is where /metrics is served (default ":8080"; "0"
	// disables it). HealthAddr likewise serves /healthz and /readyz
	// (default ":8081"; "0" disables).
	MetricsAddr, HealthAddr string
	// LeaderElection makes the manager run its leader-election runnables
	// (controllers) only while it holds the Lease
	// LeaderElectionNamespace/LeaderElectionID.
	LeaderElection          bool
	LeaderElectionID        string
	LeaderElectionNamespace string // default "default"
	// LeaderElectionIdentity defaults to the host name plus a random
	// suffix.
	LeaderElectionIdentity string
	// LeaseDuration, RenewDeadline and RetryPeriod default to 15s, 10s and
	// 2s.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// OnStartedLeading, if set, is called when this manager starts leading,
	// before its leader-election runnables start. OnStoppedLeading, if set,
	// is called when it stops leading, after they all returned. Together
	// they bracket every moment this manager's controllers may act.
	OnStartedLeading, OnStoppedLeading func()
	// CacheSyncTimeout bounds the wait for the informers' initial lists,
	// at Start and in each controller (default 2 minutes).
	CacheSyncTimeout time.Duration
	// NotRetried is the default controller.Options.NotRetried of the
	// manager's controllers (ControllerOptions, the builder): nil leaves
	// the controller package's default (422 and 400 not retried); an empty
	// slice retries every error, as kube-controller-manager's controllers.
	NotRetried []controller.ErrorClass
	// GracefulShutdownTimeout bounds the shutdown that follows the end of
	// Start's context (default 30s; negative means no bound).
	GracefulShutdownTimeout time.Duration
	// Namespace restricts every informer to one namespace ("" = all).
	Namespace string
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// ClientBuilder, when set, gives the identities of ClientFor and
	// EventRecorderFor (one per controller); nil: every component uses the
	// manager's own client.
	ClientBuilder ClientBuilder
	// Clock drives controllers, informer resyncs and the election; default
	// the real clock.
	Clock clock.WithTicker
	// Webhook configures the admission webhook server (WebhookServer),
	// which runs only when something asked for it.
	Webhook webhook.Options
	// SyncPeriod is how often every handler registered on the manager's
	// informers (every controller's watches) is replayed the whole cache
	// as updates, so that each cached object is reconciled again even if
	// an event was missed (default DefaultSyncPeriod, 10 hours; negative:
	// never). Each informer's period is SyncPeriodJitter(SyncPeriod),
	// drawn once per informer.
	SyncPeriod time.Duration
	// SyncPeriodJitter spreads the informers' periods; default
	// JitterTenPercent (controller-runtime's: SyncPeriod times a factor in
	// [0.9, 1.1)).
	SyncPeriodJitter func(time.Duration) time.Duration
	// SyncPeriodByResource overrides SyncPeriod, exactly (no jitter), for
	// the informers of one resource; zero or negative: never.
	SyncPeriodByResource map[schema.GroupResource]time.Duration
	// QPS and Burst bound the requests per second of the manager's client
	// and of every ClientFor identity, each with its own token bucket
	// (defaults DefaultQPS and DefaultBurst, controller-runtime's 20 and
	// 30; a negative QPS means no limit). They override Config's QPS and
	// Burst.
	QPS   float32
	Burst int
}

// Runnable is a component the manager runs: Start blocks until ctx ends
// (or the component fails) and returns nil on a clean stop.
type Runnable interface {
	Start(ctx context.Context) error
}

// LeaderElectionRunnable is a Runnable that tells whether it must run only
// on the leader. Runnables that do not implement it need leader election.
type LeaderElectionRunnable interface {
	NeedLeaderElection() bool
}

// RunnableFunc adapts a function to a Runnable (which needs leader
// election).
type RunnableFunc func(ctx context.Context) error

// Start implements Runnable.
func (f RunnableFunc) Start(ctx context.Context) error { return f(ctx) }

// Manager runs shared informers, controllers and other runnables, serves
// metrics and health, and elects a leader. See the package documentation.
type Manager struct {
	opts     Options
	client   *rest.Client
	scheme   *runtime.Scheme
	mapper   *mapper
	factory  *informer.Factory
	registry *prometheus.Registry
	ctrlMet  *controller.Metrics
	queueMet *workqueue.PrometheusMetricsProvider
	restMet  *rest.Metrics
	log      *slog.Logger
	leHealth *leaderelection.HealthzAdaptor
	checks   *checks

	mu sync.Mutex
	// informers are those requested through this manager, for sync
	// waits and errors; guarded by mu.
	informers map[string]*tracked
	// leaderRunnables run while leading, others always; fixed by Start.
	leaderRunnables, others []Runnable
	// infCtx is the informers' context once Start ran (nil before).
	infCtx context.Context
	// started is set by Start; Add is refused afterwards.
	started bool
	// metricsAddr, healthAddr are the bound addresses once listening.
	metricsAddr, healthAddr string
	// broadcaster records events; created by GetEventRecorderFor, shut
	// down by Start's shutdown.
	broadcaster *record.Broadcaster
	// identities are the clients of ClientFor by name; guarded by mu.
	identities map[string]*identity
	ready      chan struct{}
	elected    chan struct{}
	// webhook is the admission webhook server once asked for; guarded by
	// mu.
	webhook *webhook.Server
	// clients are GetClient's client, its cache and the API reader.
	clients *clients
}

// New builds a manager: a client, a metrics registry with the Go and
// process collectors, the controller, workqueue and informer metrics, and
// an informer factory. Nothing runs until Start.
func New(opts Options) (*Manager, error) {
	if opts.Config == nil {
		return nil, errors.New("manager: Options.Config is required")
	}
	if err := opts.setDefaults(); err != nil {
		return nil, err
	}
	reg := prometheus.NewRegistry()
	for _, col := range []prometheus.Collector{collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})} {
		if err := reg.Register(col); err != nil {
			return nil, fmt.Errorf("manager: register collector: %w", err)
		}
	}
	restMet, err := rest.NewMetrics(reg)
	if err != nil {
		return nil, fmt.Errorf("manager: %w", err)
	}
	c, err := rest.NewWithScheme(opts.throttled(opts.Config, restMet), opts.Scheme)
	if err != nil {
		return nil, fmt.Errorf("manager: build client: %w", err)
	}
	ctrlMet, err := controller.NewMetrics(reg)
	if err != nil {
		return nil, fmt.Errorf("manager: %w", err)
	}
	queueMet, err := workqueue.NewPrometheusMetricsProvider(reg)
	if err != nil {
		return nil, fmt.Errorf("manager: %w", err)
	}
	infMet, err := informer.NewMetrics(reg)
	if err != nil {
		return nil, fmt.Errorf("manager: %w", err)
	}
	m := &Manager{
		opts: opts, client: c, scheme: opts.Scheme, mapper: newMapper(c, opts.Scheme), registry: reg,
		ctrlMet: ctrlMet, queueMet: queueMet, log: opts.Logger,
		factory: informer.NewFactory(c, informer.FactoryOptions{Namespace: opts.Namespace,
			Logger: opts.Logger, Clock: opts.Clock, Metrics: infMet, ResyncPeriodFor: opts.resyncPeriodFor()}),
		informers: map[string]*tracked{}, identities: map[string]*identity{}, ready: make(chan struct{}), elected: make(chan struct{}),
		restMet: restMet,
	}
	if m.clients, err = m.newClients(); err != nil {
		return nil, err
	}
	m.checks = newChecks()
	m.checks.add(healthz, "ping", func(*http.Request) error { return nil })
	m.checks.add(readyz, "informer-sync", m.informersSynced)
	if opts.LeaderElection {
		m.leHealth = leaderelection.NewHealthzAdaptor(2 * time.Second)
		m.checks.add(healthz, m.leHealth.Name(), m.leHealth.Check)
	}
	return m, nil
}

func (o *Options) setDefaults() error {
	if o.Scheme == nil {
		s, err := NewScheme()
		if err != nil {
			return err
		}
		o.Scheme = s
	}
	if o.MetricsAddr == "" {
		o.MetricsAddr = DefaultMetricsAddr
	}
	if o.HealthAddr == "" {
		o.HealthAddr = DefaultHealthAddr
	}
	if o.LeaderElection && o.LeaderElectionID == "" {
		return errors.New("manager: LeaderElectionID is required with LeaderElection")
	}
	if o.LeaderElectionNamespace == "" {
		o.LeaderElectionNamespace = "default"
	}
	if o.LeaderElectionIdentity == "" {
		host, err := os.Hostname()
		if err != nil {
			return fmt.Errorf("manager: leader election identity: %w", err)
		}
		o.LeaderElectionIdentity = host + "_" + rand.String(8)
	}
	if o.CacheSyncTimeout <= 0 {
		o.CacheSyncTimeout = DefaultCacheSyncTimeout
	}
	if o.GracefulShutdownTimeout == 0 {
		o.GracefulShutdownTimeout = DefaultGracefulShutdownTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	o.setSyncDefaults()
	return nil
}

// Add registers r to be run by Start. Runnables that need leader election
// (see LeaderElectionRunnable; controllers do) run only while this manager
// leads, or always when LeaderElection is off. Add fails after Start.
func (m *Manager) Add(r Runnable) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.started {
		return errors.New("manager: Add after Start")
	}
	if le, ok := r.(LeaderElectionRunnable); ok && !le.NeedLeaderElection() {
		m.others = append(m.others, r)
	} else {
		m.leaderRunnables = append(m.leaderRunnables, r)
	}
	return nil
}

// Client returns the manager's API client.
func (m *Manager) Client() *rest.Client { return m.client }

// Scheme returns the scheme mapping Go types to kinds.
func (m *Manager) Scheme() *runtime.Scheme { return m.scheme }

// Factory returns the shared informer factory. Informers obtained through
// Informer and InformerFor are also tracked for the sync wait; prefer them.
func (m *Manager) Factory() *informer.Factory { return m.factory }

// Registry returns the Prometheus registry served on /metrics.
func (m *Manager) Registry() *prometheus.Registry { return m.registry }

// Logger returns the manager's logger.
func (m *Manager) Logger() *slog.Logger { return m.log }

// ControllerOptions returns controller options wired to this manager's
// metrics, clock, logger and cache-sync timeout, for controllers built by
// hand (the builder uses it).
func (m *Manager) ControllerOptions() controller.Options {
	return controller.Options{CacheSyncTimeout: m.opts.CacheSyncTimeout, Clock: m.opts.Clock,
		Logger: m.log, Metrics: m.ctrlMet, QueueMetrics: m.queueMet, NotRetried: m.opts.NotRetried}
}

// Ready is closed once Start has synced the caches and started the
// runnables that do not need leader election.
func (m *Manager) Ready() <-chan struct{} { return m.ready }

// Elected is closed once this manager leads (at once without leader
// election) and its leader-election runnables are starting.
func (m *Manager) Elected() <-chan struct{} { return m.elected }

// MetricsAddr and HealthAddr return the bound listen addresses once Start
// listens (by the time Ready is closed), "" before or when disabled.
func (m *Manager) MetricsAddr() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.metricsAddr
}

// HealthAddr: see MetricsAddr.
func (m *Manager) HealthAddr() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.healthAddr
}
