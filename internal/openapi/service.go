package openapi

import (
	"log/slog"
	"regexp"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// Options configures a Service.
type Options struct {
	// Version is the server's git version (e.g. "v1.37.0-setpoint");
	// info.version of every document is its major.minor ("1.37"), as
	// kube-apiserver publishes it, or the whole string when it has no
	// such form; "unversioned" when empty (info.version is required).
	Version string
	// Now returns the current time; it stamps Last-Modified and the
	// Expires header of immutable responses. time.Now when nil.
	Now func() time.Time
	// Logger receives build failures of lazily built documents;
	// slog.Default when nil.
	Logger *slog.Logger
}

// Service builds and serves the OpenAPI documents of a resource set. It is
// safe for concurrent use; Update swaps the whole document set atomically.
type Service struct {
	opts Options
	// current is never nil after New.
	current atomic.Pointer[snapshot]
	// mu serializes Update and SetAggregated; agg is the last
	// SetAggregated input (aggregated.go).
	mu  sync.Mutex
	agg []Aggregated
}

// snapshot is every document of one resource set. The v3 definitions are
// derived eagerly (Schemas), the v3 documents encoded on first use, all at
// once (the /openapi/v3 discovery names their hashes; v3set.go); the
// Swagger 2.0 JSON and protobuf forms are built on first use, once.
type snapshot struct {
	built time.Time
	plan  *plan
	// baseV3 is the documents of the plan; v3 adds the aggregated
	// servers' (agg) to them.
	baseV3 *v3Set
	v3     *v3Set
	agg    []Aggregated

	v2Once  sync.Once
	v2JSON  document
	v2Proto document
	v2Err   error
}

// New builds the documents of resources. It fails when a resource lacks
// its names or constructors, when New or NewList of a typed resource do
// not return Go structs, when a custom resource (Unstructured) lacks its
// Schema or ModelName or its schema refers to a model that is not
// published, or when two Go types or models claim one group-version-kind
// or one model name. The descriptors are copied; a custom resource's
// Schema is kept and must not be modified afterwards (registry.Resource
// promises that).
func New(resources []*registry.Resource, opts Options) (*Service, error) {
	opts.Version = infoVersion(opts.Version)
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	opts.Logger = opts.Logger.With("component", "openapi")
	s := &Service{opts: opts}
	if err := s.Update(resources); err != nil {
		return nil, err
	}
	return s, nil
}

// Update replaces the served resource set. On error the previous documents
// stay in place.
func (s *Service) Update(resources []*registry.Resource) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, err := newPlan(resources)
	if err != nil {
		return err
	}
	var prev *v3Set
	if snap := s.current.Load(); snap != nil {
		prev = snap.baseV3
	}
	base, err := p.renderV3(s.opts.Version, prev)
	if err != nil {
		return err
	}
	v3, err := withAggregatedV3(base, s.agg)
	if err != nil {
		return err
	}
	s.current.Store(&snapshot{built: s.opts.Now().UTC().Truncate(time.Second), plan: p, baseV3: base, v3: v3, agg: s.agg})
	return nil
}

// Schemas returns every definition of the current resource set in OpenAPI
// v3 form, keyed by model name (refs are "#/components/schemas/<name>";
// top-level kinds carry x-kubernetes-group-version-kind). It is the input
// k8s.io/apimachinery's managedfields.NewTypeConverter expects. The map and
// schemas are shared: callers must not modify them.
func (s *Service) Schemas() map[string]*spec.Schema {
	return s.current.Load().v3.schemas
}

// v2 returns the Swagger 2.0 JSON and protobuf forms, building them on
// first use.
func (snap *snapshot) v2(version string, log *slog.Logger) (jsonDoc, protoDoc document, err error) {
	snap.v2Once.Do(func() {
		snap.v2JSON, snap.v2Err = snap.plan.renderV2(version, snap.agg)
		if snap.v2Err == nil {
			snap.v2Proto, snap.v2Err = toProtobuf(snap.v2JSON.body)
		}
		if snap.v2Err != nil {
			log.Error("building OpenAPI v2 failed", "err", snap.v2Err)
		}
	})
	return snap.v2JSON, snap.v2Proto, snap.v2Err
}

var majorMinor = regexp.MustCompile(`^v?(\d+)\.(\d+)(\.|$)`)

// infoVersion is the info.version published for a server version.
func infoVersion(v string) string {
	if m := majorMinor.FindStringSubmatch(v); m != nil {
		return m[1] + "." + m[2]
	}
	if v == "" {
		return "unversioned"
	}
	return v
}
