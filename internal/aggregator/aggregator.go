package aggregator

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	"k8s.io/utils/clock"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// Resolver finds where a service is reached: the host:port of one of its
// ready endpoints for the service port (webhookclient.EnvResolver, as
// kube-apiserver's --enable-aggregator-routing), or an error worded as
// kube-apiserver's.
type Resolver interface {
	ResolveEndpoint(ctx context.Context, namespace, name string, port int32) (string, error)
}

// Config configures an Aggregator.
type Config struct {
	// Env reads APIServices, Services and EndpointSlices and writes the
	// APIServices' status (required).
	Env registry.Env
	// Resolver reaches services through their endpoints (required).
	Resolver Resolver
	// ProxyClientCert is the front-proxy client certificate presented to
	// aggregated servers (kube-apiserver's --proxy-client-cert-file and
	// --proxy-client-key-file); nil presents none.
	ProxyClientCert *tls.Certificate
	// Local reports the group-versions the server serves itself; their
	// APIServices are not proxied.
	Local func(schema.GroupVersion) bool
	// ResyncInterval is how often every APIService is checked without a
	// trigger (default 30 s).
	ResyncInterval time.Duration
	// OnChange is called after a sync changed what the aggregated
	// group-versions publish (discovery, OpenAPI).
	OnChange func()
	Logger   *slog.Logger
	Clock    clock.PassiveClock
}

// Aggregator proxies, checks and describes the aggregated group-versions.
type Aggregator struct {
	cfg     Config
	trigger chan struct{}
	// current is the published state; never nil after New.
	current atomic.Pointer[snapshot]
	// mu serializes syncs (Run's loop and Sync called by tests).
	mu sync.Mutex
}

// snapshot is the state of every APIService at the end of one sync.
type snapshot struct {
	byGV map[schema.GroupVersion]*backend
}

// backend is one APIService as the last sync saw it.
type backend struct {
	name     string
	gv       schema.GroupVersion
	spec     apiregv1.APIServiceSpec
	local    bool // no service, or a group-version the server serves
	avail    bool // Available is True
	rt       *transportEntry
	rtErr    error
	discover versionDiscovery
	openapi  openAPIDocs
}

// New returns an Aggregator; Run starts its loop.
func New(cfg Config) (*Aggregator, error) {
	if cfg.Env == nil || cfg.Resolver == nil {
		return nil, fmt.Errorf("aggregator: Env and Resolver are required")
	}
	if cfg.ResyncInterval <= 0 {
		cfg.ResyncInterval = 30 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.Local == nil {
		cfg.Local = func(schema.GroupVersion) bool { return false }
	}
	a := &Aggregator{cfg: cfg, trigger: make(chan struct{}, 1)}
	a.current.Store(&snapshot{byGV: map[schema.GroupVersion]*backend{}})
	return a, nil
}

// Trigger asks for a sync soon; it never blocks.
func (a *Aggregator) Trigger() {
	select {
	case a.trigger <- struct{}{}:
	default:
	}
}

// Run syncs at once, then on every trigger and every ResyncInterval,
// until ctx ends.
func (a *Aggregator) Run(ctx context.Context) {
	t := time.NewTicker(a.cfg.ResyncInterval)
	defer t.Stop()
	for {
		if err := a.Sync(ctx); err != nil && ctx.Err() == nil {
			a.cfg.Logger.Warn("aggregator sync", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-a.trigger:
		case <-t.C:
		}
	}
}

// lookup returns the backend proxying gv, nil when none does.
func (a *Aggregator) lookup(gv schema.GroupVersion) *backend {
	b := a.current.Load().byGV[gv]
	if b == nil || b.local {
		return nil
	}
	return b
}

// Serves reports whether requests under /apis/<group>/<version> of gv are
// proxied (an APIService with a service for a group-version the server
// does not serve itself).
func (a *Aggregator) Serves(gv schema.GroupVersion) bool { return a.lookup(gv) != nil }
