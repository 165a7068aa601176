package controllermanager

import (
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/rand"

	"github.com/setpoint-dev/setpoint/internal/controllers/deployment"
	"github.com/setpoint-dev/setpoint/internal/controllers/disruption"
	"github.com/setpoint-dev/setpoint/internal/controllers/garbagecollector"
	"github.com/setpoint-dev/setpoint/internal/controllers/namespace"
	"github.com/setpoint-dev/setpoint/internal/controllers/nodelifecycle"
	"github.com/setpoint-dev/setpoint/internal/controllers/replicaset"
	"github.com/setpoint-dev/setpoint/internal/controllers/resourcequota"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/rest"
	"github.com/setpoint-dev/setpoint/sharding"
)

// Names of the controllers NewControllerManager can run, as
// kube-controller-manager's --controllers flag names them.
const (
	ReplicaSet       = "replicaset-controller"
	Deployment       = "deployment-controller"
	GarbageCollector = "garbage-collector-controller"
	Namespace        = "namespace-controller"
	NodeLifecycle    = "node-lifecycle-controller"
	ResourceQuota    = "resourcequota-controller"
	Disruption       = "disruption-controller"
)

// AllControllers lists every controller name, in start order.
var AllControllers = []string{ReplicaSet, Deployment, GarbageCollector, Namespace, NodeLifecycle, ResourceQuota, Disruption}

// Election configures a component's leader election.
type Election struct {
	// Disabled runs the component without a Lease (one replica only).
	Disabled bool
	// Identity names this replica in the Lease; default host name plus a
	// random suffix, so a restarted process waits for its old Lease to
	// expire. A fixed identity lets a restart take the Lease back at once.
	Identity string
	// LeaseDuration, RenewDeadline and RetryPeriod default to 15 s, 10 s
	// and 2 s.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
}

// Common is what every component's manager needs.
type Common struct {
	// Config reaches the API server (required).
	Config *rest.Config
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// MetricsAddr and HealthAddr serve /metrics and /healthz, /readyz;
	// "" or "0" serves nothing.
	MetricsAddr, HealthAddr string
	Election                Election
}

// ControllerManagerOptions configure NewControllerManager.
type ControllerManagerOptions struct {
	Common
	// Controllers names the controllers to run (see AllControllers); nil
	// runs them all.
	Controllers      []string
	ReplicaSet       replicaset.Options
	Deployment       deployment.Options
	GarbageCollector garbagecollector.Options
	Namespace        namespace.Options
	NodeLifecycle    nodelifecycle.Options
	ResourceQuota    resourcequota.Options
	Disruption       disruption.Options
	// Sharding, when enabled, runs the ReplicaSet and Deployment
	// controllers sharded by namespace on every replica; the others stay
	// under the leader Lease.
	Sharding Sharding
}

// Sharding configures the sharded mode of the controller manager.
type Sharding struct {
	// Enabled runs the ReplicaSet and Deployment controllers on every
	// replica, each reconciling the namespaces of the shards it owns
	// (Leases kube-system/kube-controller-manager-shard-<i>, membership
	// kube-system/kube-controller-manager-member-<hash>). The
	// garbage-collector, namespace and node-lifecycle controllers keep
	// running only on the holder of kube-system/kube-controller-manager.
	Enabled bool
	// Shards is the number of virtual shards (default
	// sharding.DefaultShards); every replica must use the same.
	Shards int
}

// NewControllerManager builds the controller manager: the selected
// controllers on one manager electing on kube-system/kube-controller-manager.
func NewControllerManager(opts ControllerManagerOptions) (*manager.Manager, error) {
	names := opts.Controllers
	if names == nil {
		names = AllControllers
	}
	if err := checkNames(names); err != nil {
		return nil, err
	}
	if opts.Sharding.Enabled && opts.Election.Disabled {
		return nil, fmt.Errorf("controller manager: sharding needs leader election (for the unsharded controllers)")
	}
	if opts.Sharding.Enabled && opts.Election.Identity == "" {
		id, err := defaultIdentity()
		if err != nil {
			return nil, err
		}
		opts.Election.Identity = id
	}
	mgr, err := newManager(opts.Common, "kube-controller-manager")
	if err != nil {
		return nil, err
	}
	if opts.Sharding.Enabled {
		s, err := newSharder(mgr, opts.Common, opts.Sharding)
		if err != nil {
			return nil, err
		}
		opts.ReplicaSet.Sharder, opts.Deployment.Sharder = s, s
	}
	adders := map[string]func() error{
		ReplicaSet:       func() error { return replicaset.Add(mgr, opts.ReplicaSet) },
		Deployment:       func() error { return deployment.Add(mgr, opts.Deployment) },
		GarbageCollector: func() error { return garbagecollector.Add(mgr, opts.GarbageCollector) },
		Namespace:        func() error { return namespace.Add(mgr, opts.Namespace) },
		NodeLifecycle:    func() error { return nodelifecycle.Add(mgr, opts.NodeLifecycle) },
		ResourceQuota:    func() error { return resourcequota.Add(mgr, opts.ResourceQuota) },
		Disruption:       func() error { return disruption.Add(mgr, opts.Disruption) },
	}
	for _, name := range AllControllers {
		if !slices.Contains(names, name) {
			continue
		}
		if err := adders[name](); err != nil {
			return nil, fmt.Errorf("controller manager: add %s: %w", name, err)
		}
	}
	return mgr, nil
}

// ParseControllers reads a --controllers value: a comma-separated list of
// names, "*" for all of them.
func ParseControllers(s string) ([]string, error) {
	if s == "" || s == "*" {
		return nil, nil
	}
	var names []string
	for _, n := range strings.Split(s, ",") {
		if n = strings.TrimSpace(n); n != "" {
			names = append(names, n)
		}
	}
	return names, checkNames(names)
}

func checkNames(names []string) error {
	for _, n := range names {
		if !slices.Contains(AllControllers, n) {
			known := slices.Clone(AllControllers)
			sort.Strings(known)
			return fmt.Errorf("unknown controller %q (known: %s)", n, strings.Join(known, ", "))
		}
	}
	return nil
}

// newSharder builds the controller manager's Sharder (group
// kube-controller-manager, the election's identity and timings) and adds it
// to mgr, where it runs on every replica.
func newSharder(mgr *manager.Manager, c Common, o Sharding) (*sharding.Sharder, error) {
	s, err := sharding.New(sharding.Options{
		Client: mgr.Client(), Name: "kube-controller-manager", Namespace: "kube-system",
		Identity: c.Election.Identity, Shards: o.Shards,
		LeaseDuration: c.Election.LeaseDuration, RenewDeadline: c.Election.RenewDeadline, RetryPeriod: c.Election.RetryPeriod,
		Logger: mgr.Logger(),
	})
	if err != nil {
		return nil, fmt.Errorf("controller manager: %w", err)
	}
	if err := mgr.Add(s); err != nil {
		return nil, fmt.Errorf("controller manager: %w", err)
	}
	return s, nil
}

// defaultIdentity is the host name plus a random suffix.
func defaultIdentity() (string, error) {
	host, err := os.Hostname()
	if err != nil {
		return "", fmt.Errorf("controller manager: identity: %w", err)
	}
	return host + "_" + rand.String(8), nil
}

// newManager builds a manager for one component, electing on the Lease
// kube-system/<leaseName> unless the election is disabled.
func newManager(c Common, leaseName string) (*manager.Manager, error) {
	if c.Config == nil {
		return nil, fmt.Errorf("%s: a rest.Config is required", leaseName)
	}
	log := c.Logger
	if log == nil {
		log = slog.Default()
	}
	mo := manager.Options{
		Config: c.Config, Logger: log.With("component", leaseName),
		MetricsAddr: orDisabled(c.MetricsAddr), HealthAddr: orDisabled(c.HealthAddr),
		LeaderElection: !c.Election.Disabled, LeaderElectionID: leaseName, LeaderElectionNamespace: "kube-system",
		LeaderElectionIdentity: c.Election.Identity, LeaseDuration: c.Election.LeaseDuration,
		RenewDeadline: c.Election.RenewDeadline, RetryPeriod: c.Election.RetryPeriod,
	}
	mgr, err := manager.New(mo)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", leaseName, err)
	}
	return mgr, nil
}

func orDisabled(addr string) string {
	if addr == "" {
		return "0"
	}
	return addr
}
