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

	"github.com/setpoint-dev/setpoint/controller"
	"github.com/setpoint-dev/setpoint/internal/clientbuilder"
	"github.com/setpoint-dev/setpoint/internal/controllers/clusterroleaggregation"
	"github.com/setpoint-dev/setpoint/internal/controllers/cronjob"
	"github.com/setpoint-dev/setpoint/internal/controllers/daemonset"
	"github.com/setpoint-dev/setpoint/internal/controllers/deployment"
	"github.com/setpoint-dev/setpoint/internal/controllers/disruption"
	"github.com/setpoint-dev/setpoint/internal/controllers/endpoints"
	"github.com/setpoint-dev/setpoint/internal/controllers/endpointslice"
	"github.com/setpoint-dev/setpoint/internal/controllers/endpointslicemirroring"
	"github.com/setpoint-dev/setpoint/internal/controllers/expand"
	"github.com/setpoint-dev/setpoint/internal/controllers/garbagecollector"
	"github.com/setpoint-dev/setpoint/internal/controllers/job"
	"github.com/setpoint-dev/setpoint/internal/controllers/namespace"
	"github.com/setpoint-dev/setpoint/internal/controllers/nodeipam"
	"github.com/setpoint-dev/setpoint/internal/controllers/nodelifecycle"
	"github.com/setpoint-dev/setpoint/internal/controllers/persistentvolume"
	"github.com/setpoint-dev/setpoint/internal/controllers/podautoscaler"
	"github.com/setpoint-dev/setpoint/internal/controllers/podgc"
	"github.com/setpoint-dev/setpoint/internal/controllers/provisioner"
	"github.com/setpoint-dev/setpoint/internal/controllers/pvcprotection"
	"github.com/setpoint-dev/setpoint/internal/controllers/pvprotection"
	"github.com/setpoint-dev/setpoint/internal/controllers/replicaset"
	"github.com/setpoint-dev/setpoint/internal/controllers/replicationcontroller"
	"github.com/setpoint-dev/setpoint/internal/controllers/resourcequota"
	"github.com/setpoint-dev/setpoint/internal/controllers/rootcacertpublisher"
	"github.com/setpoint-dev/setpoint/internal/controllers/serviceaccount"
	"github.com/setpoint-dev/setpoint/internal/controllers/serviceaccounttoken"
	"github.com/setpoint-dev/setpoint/internal/controllers/statefulset"
	"github.com/setpoint-dev/setpoint/internal/controllers/ttlafterfinished"
	"github.com/setpoint-dev/setpoint/internal/controllers/validatingadmissionpolicystatus"
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
	StatefulSet      = "statefulset-controller"
	PVBinder         = "persistentvolume-binder-controller"
	PVProtection     = "persistentvolume-protection-controller"
	PVCProtection    = "persistentvolumeclaim-protection-controller"
	PVExpander       = "persistentvolume-expander-controller"
	// Provisioner is setpoint's own: the simulated dynamic provisioner
	// (an external provisioner on Kubernetes) and the default class.
	Provisioner    = "simulated-provisioner-controller"
	DaemonSet      = "daemonset-controller"
	ServiceAccount = "serviceaccount-controller"
	// ServiceAccountToken fills the token Secrets users ask for; it runs
	// only with a signing key (ServiceAccountToken.Signer).
	ServiceAccountToken = "serviceaccount-token-controller"
	Endpoints           = "endpoints-controller"
	EndpointSlice       = "endpointslice-controller"
	RC                  = "replicationcontroller-controller"
	Mirroring           = "endpointslice-mirroring-controller"
	RootCAPublisher     = "root-ca-certificate-publisher-controller"
	Job                 = "job-controller"
	TTLAfterFinished    = "ttl-after-finished-controller"
	CronJob             = "cronjob-controller"
	PodGC               = "pod-garbage-collector-controller"
	NodeIPAM            = "node-ipam-controller"
	ResourceQuota       = "resourcequota-controller"
	Disruption          = "disruption-controller"
	HPA                 = "horizontal-pod-autoscaler-controller"
)

// ClusterRoleAggregation names kube-controller-manager's ClusterRole
// aggregation controller.
const ClusterRoleAggregation = "clusterrole-aggregation-controller"

// ValidatingAdmissionPolicyStatus names kube-controller-manager's
// type-checking controller of ValidatingAdmissionPolicies.
const ValidatingAdmissionPolicyStatus = "validatingadmissionpolicy-status-controller"

// AllControllers lists every controller name, in start order.
var AllControllers = []string{ReplicaSet, Deployment, GarbageCollector, Namespace, NodeLifecycle,
	StatefulSet, PVBinder, PVProtection, PVCProtection, PVExpander, Provisioner, DaemonSet, ServiceAccount,
	ServiceAccountToken, RootCAPublisher, Endpoints, EndpointSlice, Mirroring, RC, Job, TTLAfterFinished, CronJob,
	PodGC, NodeIPAM, ResourceQuota, Disruption, HPA, ClusterRoleAggregation, ValidatingAdmissionPolicyStatus}

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
	// QPS and Burst bound each of the component's clients (the shared
	// informers' and each controller's identity, each with its own token
	// bucket), as --kube-api-qps and --kube-api-burst; zero selects the
	// component's default (see limits.go), a negative QPS means no limit.
	QPS   float32
	Burst int
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
	StatefulSet      statefulset.Options
	PVBinder         persistentvolume.Options
	PVProtection     pvprotection.Options
	PVCProtection    pvcprotection.Options
	PVExpander       expand.Options
	Provisioner      provisioner.Options
	DaemonSet        daemonset.Options
	ServiceAccount   serviceaccount.Options
	// ServiceAccountToken.RootCA defaults to the CA bundle Config trusts;
	// without a Signer (kube-controller-manager's
	// --service-account-private-key-file) the controller does not run.
	ServiceAccountToken serviceaccounttoken.Options
	Endpoints           endpoints.Options
	EndpointSlice       endpointslice.Options
	Mirroring           endpointslicemirroring.Options
	// RC tunes the ReplicationController controller (the ReplicaSet
	// controller's options; it is never sharded).
	RC replicaset.Options
	// RootCAPublisher.RootCA defaults to the CA bundle Config trusts (as
	// kube-controller-manager's without --root-ca-file).
	RootCAPublisher        rootcacertpublisher.Options
	Job                    job.Options
	TTLAfterFinished       ttlafterfinished.Options
	CronJob                cronjob.Options
	PodGC                  podgc.Options
	NodeIPAM               nodeipam.Options
	ResourceQuota          resourcequota.Options
	Disruption             disruption.Options
	HPA                    podautoscaler.Options
	ClusterRoleAggregation clusterroleaggregation.Options
	// UseServiceAccountCredentials runs each controller as its own
	// ServiceAccount in kube-system (kube's names: replicaset-controller,
	// generic-garbage-collector, …; created by the controller manager, with
	// tokens from the TokenRequest API renewed before they expire), as
	// kube-controller-manager's --use-service-account-credentials, which
	// kubeadm turns on. Off, every controller uses Config's identity. The
	// shared informers and leader election use Config's identity either way.
	UseServiceAccountCredentials bool
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
	if opts.Sharding.Enabled && opts.Config != nil && opts.Config.ContentType == "" {
		// Sharded replicas stay JSON for now: with protobuf,
		// TestShardedControllerManagerLeaderKilled fails under -race
		// (not yet understood), so they keep the format they were tested in.
		cp := *opts.Config
		cp.ContentType = rest.ContentTypeJSON
		opts.Config = &cp
	}
	lim := controllerManagerLimits(opts.Common)
	var cb manager.ClientBuilder
	if opts.UseServiceAccountCredentials {
		b, err := clientbuilder.New(lim.apply(ComponentConfig(opts.Config)), clientbuilder.Options{Logger: opts.Logger})
		if err != nil {
			return nil, fmt.Errorf("controller manager: %w", err)
		}
		cb = b
	}
	mgr, err := newManager(opts.Common, "kube-controller-manager", cb, lim)
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
		StatefulSet:      func() error { return statefulset.Add(mgr, opts.StatefulSet) },
		PVBinder:         func() error { return persistentvolume.Add(mgr, opts.PVBinder) },
		PVProtection:     func() error { return pvprotection.Add(mgr, opts.PVProtection) },
		PVCProtection:    func() error { return pvcprotection.Add(mgr, opts.PVCProtection) },
		PVExpander:       func() error { return expand.Add(mgr, opts.PVExpander) },
		Provisioner:      func() error { return provisioner.Add(mgr, opts.Provisioner) },
		DaemonSet:        func() error { return daemonset.Add(mgr, opts.DaemonSet) },
		ServiceAccount:   func() error { return serviceaccount.Add(mgr, opts.ServiceAccount) },
		ServiceAccountToken: func() error {
			if len(opts.ServiceAccountToken.RootCA) == 0 {
				ca, err := clusterCA(opts.Config)
				if err != nil {
					return err
				}
				opts.ServiceAccountToken.RootCA = ca
			}
			return serviceaccounttoken.Add(mgr, opts.ServiceAccountToken)
		},
		Endpoints:     func() error { return endpoints.Add(mgr, opts.Endpoints) },
		EndpointSlice: func() error { return endpointslice.Add(mgr, opts.EndpointSlice) },
		RC:            func() error { return replicationcontroller.Add(mgr, opts.RC) },
		Mirroring:     func() error { return endpointslicemirroring.Add(mgr, opts.Mirroring) },
		RootCAPublisher: func() error {
			if len(opts.RootCAPublisher.RootCA) == 0 {
				ca, err := clusterCA(opts.Config)
				if err != nil {
					return err
				}
				opts.RootCAPublisher.RootCA = ca
			}
			return rootcacertpublisher.Add(mgr, opts.RootCAPublisher)
		},
		Job:              func() error { return job.Add(mgr, opts.Job) },
		TTLAfterFinished: func() error { return ttlafterfinished.Add(mgr, opts.TTLAfterFinished) },
		CronJob:          func() error { return cronjob.Add(mgr, opts.CronJob) },
		PodGC:            func() error { return podgc.Add(mgr, opts.PodGC) },
		NodeIPAM:         func() error { return nodeipam.Add(mgr, opts.NodeIPAM) },
		ResourceQuota:    func() error { return resourcequota.Add(mgr, opts.ResourceQuota) },
		Disruption:       func() error { return disruption.Add(mgr, opts.Disruption) },
		HPA:              func() error { return podautoscaler.Add(mgr, opts.HPA) },
		ClusterRoleAggregation: func() error {
			return clusterroleaggregation.Add(mgr, opts.ClusterRoleAggregation)
		},
		ValidatingAdmissionPolicyStatus: func() error { return validatingadmissionpolicystatus.Add(mgr) },
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
func newManager(c Common, leaseName string, cb manager.ClientBuilder, lim limits) (*manager.Manager, error) {
	if c.Config == nil {
		return nil, fmt.Errorf("%s: a rest.Config is required", leaseName)
	}
	log := c.Logger
	if log == nil {
		log = slog.Default()
	}
	mo := manager.Options{
		Config: ComponentConfig(c.Config), Logger: log.With("component", leaseName),
		MetricsAddr: orDisabled(c.MetricsAddr), HealthAddr: orDisabled(c.HealthAddr),
		LeaderElection: !c.Election.Disabled, LeaderElectionID: leaseName, LeaderElectionNamespace: "kube-system",
		LeaderElectionIdentity: c.Election.Identity, LeaseDuration: c.Election.LeaseDuration,
		RenewDeadline: c.Election.RenewDeadline, RetryPeriod: c.Election.RetryPeriod,
		ClientBuilder: cb,
		// Every error is retried with back-off, as kube-controller-manager's
		// controllers do (a 422 on a pod create is a template to fix, and
		// the ReplicaFailure condition and events say so).
		NotRetried: []controller.ErrorClass{},
	}
	lim.setOn(&mo)
	mgr, err := manager.New(mo)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", leaseName, err)
	}
	return mgr, nil
}

// ComponentConfig is cfg as the cluster's own components use it: in
// protobuf unless cfg names a content type, as kube-controller-manager,
// kube-scheduler and the kubelet default --kube-api-content-type to
// application/vnd.kubernetes.protobuf (objects without a protobuf form,
// such as custom resources, stay JSON). cfg is not modified.
func ComponentConfig(cfg *rest.Config) *rest.Config {
	if cfg == nil || cfg.ContentType != "" {
		return cfg
	}
	cp := *cfg
	cp.ContentType = rest.ContentTypeProtobuf
	return &cp
}

func orDisabled(addr string) string {
	if addr == "" {
		return "0"
	}
	return addr
}
