package nodeagent

import (
	"fmt"
	"net"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/clock"

	"github.com/setpoint-dev/setpoint/rest"
)

// Defaults of Options, Kubernetes' (kubelet) values where one exists.
const (
	DefaultNamePrefix = "node-"
	// DefaultLeaseDuration is the kubelet's nodeLeaseDurationSeconds.
	DefaultLeaseDuration = 40 * time.Second
	// DefaultLeaseRenewInterval is a quarter of the lease duration, as the
	// kubelet renews.
	DefaultLeaseRenewInterval = 10 * time.Second
	// DefaultStatusUpdateFrequency is the kubelet's nodeStatusUpdateFrequency:
	// how often the agent compares a node's status with what it would post.
	DefaultStatusUpdateFrequency = 10 * time.Second
	// DefaultStatusReportFrequency is the kubelet's
	// nodeStatusReportFrequency: an unchanged status is posted this often.
	DefaultStatusReportFrequency = 5 * time.Minute
	// DefaultRestartBackoff is the kubelet's initial container restart
	// back-off; it doubles per restart up to MaxRestartBackoff.
	DefaultRestartBackoff = 10 * time.Second
	MaxRestartBackoff     = 5 * time.Minute
	// DefaultWorkers is the number of pod workers.
	DefaultWorkers = 32
	// LeaseNamespace holds the node leases.
	LeaseNamespace = "kube-node-lease"
	// DefaultServingAddress is where the kubelet endpoint listens.
	DefaultServingAddress = "127.0.0.1:0"
)

// DefaultKubeAPIQPS and DefaultKubeAPIBurst are each node's client
// limits, the kubelet's defaults.
const (
	DefaultKubeAPIQPS   float32 = 50
	DefaultKubeAPIBurst         = 100
)

// Options configure an Agent. The zero value of every field selects the
// documented default.
type Options struct {
	// Count is the number of simulated nodes (default 1).
	Count int
	// NamePrefix names the nodes NamePrefix+"0" … NamePrefix+(Count-1)
	// (default "node-").
	NamePrefix string
	// Capacity of every node; default cpu 32, memory 256Gi, pods 110,
	// ephemeral-storage 1Ti. Allocatable equals capacity.
	Capacity corev1.ResourceList
	// Labels are added to every node, over the defaults
	// kubernetes.io/hostname=<name>, kubernetes.io/os=linux,
	// kubernetes.io/arch=amd64, node.kubernetes.io/instance-type=setpoint-sim.
	Labels map[string]string
	// StartDelay is how long a pod bound to a node stays Pending before it
	// runs (default 0).
	StartDelay time.Duration
	// NodeCredentials, when set, gives each node its own identity: the
	// client configuration node name writes its Node, Lease, pod statuses,
	// pod deletions and events with (a kubelet's client certificate of
	// system:node:<name> in system:nodes). Unset, every node writes with
	// the manager's client.
	NodeCredentials func(node string) (*rest.Config, error)
	// KubeAPIQPS and KubeAPIBurst bound each node's own client (with
	// NodeCredentials, when its configuration sets no QPS), as the
	// kubelet's --kube-api-qps and --kube-api-burst: default
	// DefaultKubeAPIQPS and DefaultKubeAPIBurst, the kubelet's 50 and 100;
	// a negative QPS means no limit.
	KubeAPIQPS   float32
	KubeAPIBurst int
	// StopDelay caps the simulated container stop time of a deleted pod:
	// it is gone after min(deletionGracePeriodSeconds, StopDelay) (default
	// 0: at once).
	StopDelay time.Duration
	// RestartBackoff is the first container restart back-off (default
	// 10s); each later restart doubles it, up to 5 minutes.
	RestartBackoff time.Duration
	// RunTime is how long the containers of pods meant to finish
	// (restartPolicy Never or OnFailure, and either belonging to a Job or
	// naming a command or args) and regular init containers run before
	// they exit, unless the pod's setpoint.dev/run-time annotation says
	// otherwise. Default 0: they exit as soon as they started, as KWOK's
	// default stages complete Job pods. A bare image under Never or
	// OnFailure outside a Job runs until deleted.
	RunTime time.Duration
	// IgnoreMissingDependencies runs pods whose ConfigMaps, Secrets,
	// PersistentVolumeClaims or ServiceAccounts are missing, as KWOK does,
	// instead of holding them as the kubelet does (deps.go). Objects that
	// a real workload's own program creates at run time (a Job that writes
	// a Secret) never appear on simulated nodes; this lets such workloads
	// run.
	IgnoreMissingDependencies bool
	// UnpullableImages are the images the nodes cannot pull (patterns in
	// path.Match syntax against the image as the pod names it, e.g.
	// "*:404"): their containers never start but wait in ErrImagePull and
	// ImagePullBackOff as on a node whose registry lacks them (pull.go).
	// Empty: every image pulls.
	UnpullableImages []string
	// DisableEvents turns the kubelet's events (Pulled, Created, Started,
	// Killing, BackOff, Unhealthy, FailedMount, Failed, DeadlineExceeded)
	// off.
	DisableEvents bool
	// EventQueueSize bounds the events waiting to be written (default
	// 1000, the record package's); when it is full further events are
	// dropped, as the kubelet's recorder drops them.
	EventQueueSize int
	// LeaseDuration, LeaseRenewInterval, StatusUpdateFrequency and
	// StatusReportFrequency default to the kubelet's 40s, 10s, 10s, 5m.
	LeaseDuration, LeaseRenewInterval            time.Duration
	StatusUpdateFrequency, StatusReportFrequency time.Duration
	// Workers is the number of pod workers (default 32).
	Workers int
	// ServingAddress is where the kubelet endpoint of all the nodes
	// listens (HTTPS; default DefaultServingAddress, a free port of the
	// loopback address).
	ServingAddress string
	// AdvertiseAddress is the address the nodes report (their InternalIP,
	// the pods' hostIP) for the API server to reach the endpoint; default
	// the listener's address (for a wildcard listener, the machine's first
	// global unicast address).
	AdvertiseAddress string
	// ClientCA is the PEM bundle that signs the certificates of the clients
	// the endpoint accepts: the cluster CA, which signs the API server's
	// kubelet client certificate. Without it every request is a 401.
	ClientCA []byte
	// Clock drives delays, heartbeats and timestamps; default the
	// manager's clock.
	Clock clock.WithTicker
}

func (o *Options) setDefaults(mgrClock clock.WithTicker) error {
	if o.Count < 0 {
		return fmt.Errorf("nodeagent: Count %d is negative", o.Count)
	}
	if o.Count == 0 {
		o.Count = 1
	}
	if o.NamePrefix == "" {
		o.NamePrefix = DefaultNamePrefix
	}
	if o.KubeAPIQPS == 0 {
		o.KubeAPIQPS = DefaultKubeAPIQPS
	}
	if o.KubeAPIBurst == 0 {
		o.KubeAPIBurst = DefaultKubeAPIBurst
	}
	if o.Capacity == nil {
		o.Capacity = corev1.ResourceList{
			corev1.ResourceCPU:              resource.MustParse("32"),
			corev1.ResourceMemory:           resource.MustParse("256Gi"),
			corev1.ResourcePods:             resource.MustParse("110"),
			corev1.ResourceEphemeralStorage: resource.MustParse("1Ti"),
		}
	}
	if o.Count > maxNodes {
		return fmt.Errorf("nodeagent: Count %d exceeds %d (pod CIDRs)", o.Count, maxNodes)
	}
	setDuration(&o.RestartBackoff, DefaultRestartBackoff)
	setDuration(&o.LeaseDuration, DefaultLeaseDuration)
	setDuration(&o.LeaseRenewInterval, DefaultLeaseRenewInterval)
	setDuration(&o.StatusUpdateFrequency, DefaultStatusUpdateFrequency)
	setDuration(&o.StatusReportFrequency, DefaultStatusReportFrequency)
	if o.Workers <= 0 {
		o.Workers = DefaultWorkers
	}
	if o.ServingAddress == "" {
		o.ServingAddress = DefaultServingAddress
	}
	if o.AdvertiseAddress != "" && net.ParseIP(o.AdvertiseAddress) == nil {
		return fmt.Errorf("nodeagent: AdvertiseAddress %q is not an IP address", o.AdvertiseAddress)
	}
	if o.Clock == nil {
		o.Clock = mgrClock
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	return nil
}

func setDuration(d *time.Duration, def time.Duration) {
	if *d <= 0 {
		*d = def
	}
}
