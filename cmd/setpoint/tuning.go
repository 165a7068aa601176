package main

import (
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/setpoint-dev/setpoint/internal/controllermanager"
	"github.com/setpoint-dev/setpoint/internal/controllers/nodeipam"
	"github.com/setpoint-dev/setpoint/internal/controllers/podautoscaler"
	"github.com/setpoint-dev/setpoint/internal/controllers/podgc"
	"github.com/setpoint-dev/setpoint/internal/serviceaccount"
)

// controllerFlags tune the controller manager (node lifecycle timings, pod
// GC threshold, node IPAM range).
type controllerFlags struct {
	monitorGrace                time.Duration
	rootCAFile                  string
	saKeyFile                   string
	terminatedPodGCThreshold    int
	clusterCIDR                 string
	nodeCIDRMaskSize            int
	hpaSyncPeriod, hpaDownscale time.Duration
}

func (f *controllerFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.DurationVar(&f.monitorGrace, "node-monitor-grace-period", 40*time.Second,
		"how long a node may go without a heartbeat before it is marked NotReady (Unknown) and tainted unreachable")
	fl.StringVar(&f.rootCAFile, "root-ca-file", "",
		"the CA bundle published as kube-root-ca.crt in every namespace (default: the CA the controller manager's kubeconfig trusts)")
	fl.StringVar(&f.saKeyFile, "service-account-private-key-file", "",
		"PEM RSA key that signs the tokens of the kubernetes.io/service-account-token Secrets users create (the API server's pki/sa.key); without it those Secrets stay empty")
	fl.IntVar(&f.terminatedPodGCThreshold, "terminated-pod-gc-threshold", podgc.DefaultTerminatedPodThreshold,
		"number of terminated pods that can exist before the pod garbage collector starts deleting them; <= 0 disables that")
	fl.StringVar(&f.clusterCIDR, "cluster-cidr", nodeipam.DefaultClusterCIDR, "IPv4 range node IPAM assigns nodes' podCIDRs from")
	fl.IntVar(&f.nodeCIDRMaskSize, "node-cidr-mask-size", nodeipam.DefaultNodeCIDRMaskSize, "prefix length of each node's podCIDR")
	fl.DurationVar(&f.hpaSyncPeriod, "horizontal-pod-autoscaler-sync-period", podautoscaler.DefaultSyncPeriod,
		"how often each horizontal pod autoscaler is synced")
	fl.DurationVar(&f.hpaDownscale, "horizontal-pod-autoscaler-downscale-stabilization", podautoscaler.DefaultDownscaleStabilization,
		"how far back the autoscaler looks for a higher recommendation before scaling down")
}

func (f *controllerFlags) apply(o *controllermanager.ControllerManagerOptions) error {
	o.NodeLifecycle.NodeMonitorGracePeriod = f.monitorGrace
	if f.rootCAFile != "" {
		ca, err := os.ReadFile(f.rootCAFile)
		if err != nil {
			return fmt.Errorf("--root-ca-file: %w", err)
		}
		o.RootCAPublisher.RootCA, o.ServiceAccountToken.RootCA = ca, ca
	}
	if f.saKeyFile != "" {
		signer, err := serviceAccountSigner(f.saKeyFile)
		if err != nil {
			return fmt.Errorf("--service-account-private-key-file: %w", err)
		}
		o.ServiceAccountToken.Signer = signer
	}
	o.PodGC.TerminatedPodThreshold = f.terminatedPodGCThreshold
	if f.terminatedPodGCThreshold <= 0 {
		o.PodGC.TerminatedPodThreshold = -1
	}
	o.NodeIPAM.ClusterCIDR, o.NodeIPAM.NodeCIDRMaskSize = f.clusterCIDR, f.nodeCIDRMaskSize
	o.HPA.SyncPeriod, o.HPA.DownscaleStabilization = f.hpaSyncPeriod, f.hpaDownscale
	return nil
}

// serviceAccountSigner loads the PEM RSA key at path as the signer of
// legacy service-account tokens.
func serviceAccountSigner(path string) (*serviceaccount.Issuer, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(b)
	if block == nil {
		return nil, fmt.Errorf("%s: no PEM block", path)
	}
	key, err := x509.ParsePKCS1PrivateKey(block.Bytes)
	if err != nil {
		k8, err8 := x509.ParsePKCS8PrivateKey(block.Bytes)
		rsaKey, ok := k8.(*rsa.PrivateKey)
		if err8 != nil || !ok {
			return nil, fmt.Errorf("%s: not an RSA private key: %w", path, err)
		}
		key = rsaKey
	}
	return serviceaccount.NewIssuer(key, serviceaccount.DefaultIssuer, []string{serviceaccount.DefaultIssuer})
}

// nodeFlags tune the simulated nodes.
type nodeFlags struct {
	prefix                string
	startDelay, stopDelay time.Duration
	restartBackoff        time.Duration
	runTime               time.Duration
	noEvents              bool
	ignoreDeps            bool
	unpullable            []string
	leaseDuration, renew  time.Duration
	cpu, memory, pods     string
	kubeletAddr           string
	kubeletAdvertise      string
}

func (f *nodeFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.prefix, "name-prefix", "node-", "simulated nodes are named <prefix>0, <prefix>1, …")
	fl.DurationVar(&f.startDelay, "pod-start-delay", 0, "how long a pod bound to a simulated node stays Pending before it runs")
	fl.DurationVar(&f.stopDelay, "pod-stop-delay", time.Second,
		"cap on the simulated container stop time of a deleted pod: it is gone min(its grace period, this) after the node saw the deletion (1s: KWOK's pod-delete stage; 0: at once)")
	fl.DurationVar(&f.restartBackoff, "container-restart-backoff", 10*time.Second,
		"first back-off before a crashed container restarts (doubling up to 5 minutes, as the kubelet's)")
	fl.DurationVar(&f.runTime, "pod-run-time", 0,
		"how long the containers of pods meant to finish (restartPolicy Never or OnFailure, and a Job's pod or a container naming its command or args) and init containers run before they exit 0, unless the pod's setpoint.dev/run-time annotation says otherwise")
	fl.BoolVar(&f.noEvents, "disable-kubelet-events", false, "do not write the simulated kubelets' events (Pulled, Created, Started, Killing, BackOff, Unhealthy, FailedMount…)")
	fl.BoolVar(&f.ignoreDeps, "ignore-missing-pod-dependencies", false,
		"run pods whose ConfigMaps, Secrets, PersistentVolumeClaims or ServiceAccounts are missing, as KWOK does, instead of holding them as a kubelet does (CreateContainerConfigError, FailedMount)")
	fl.StringSliceVar(&f.unpullable, "unpullable-image", nil,
		"images the simulated nodes cannot pull (repeatable or comma-separated; path.Match patterns against the image as the pod names it, e.g. '*:404'): "+
			"their containers wait in ErrImagePull and ImagePullBackOff, retried with the kubelet's back-off, as on a node whose registry lacks them")
	fl.DurationVar(&f.leaseDuration, "node-lease-duration", 40*time.Second, "leaseDurationSeconds of each node's heartbeat Lease")
	fl.DurationVar(&f.renew, "node-lease-renew-interval", 10*time.Second, "how often each node renews its heartbeat Lease")
	fl.StringVar(&f.cpu, "node-cpu", "32", "cpu capacity of each simulated node")
	fl.StringVar(&f.memory, "node-memory", "256Gi", "memory capacity of each simulated node")
	fl.StringVar(&f.pods, "node-pods", "110", "pod capacity of each simulated node")
	fl.StringVar(&f.kubeletAddr, "kubelet-address", "127.0.0.1:0",
		"where the simulated nodes' kubelet endpoint listens (HTTPS; pods/log, exec, attach, port-forward and nodes/proxy reach it)")
	fl.StringVar(&f.kubeletAdvertise, "kubelet-advertise-address", "",
		"the address the simulated nodes report for their kubelet endpoint (default: the --kubelet-address host, or the machine's first global address when that is a wildcard)")
}

func (f *nodeFlags) apply(o *controllermanager.NodesOptions) error {
	capacity := corev1.ResourceList{}
	for name, v := range map[corev1.ResourceName]string{corev1.ResourceCPU: f.cpu, corev1.ResourceMemory: f.memory, corev1.ResourcePods: f.pods} {
		q, err := resource.ParseQuantity(v)
		if err != nil {
			return fmt.Errorf("--node-%s: %w", name, err)
		}
		capacity[name] = q
	}
	a := &o.Agent
	a.NamePrefix, a.StartDelay, a.StopDelay = f.prefix, f.startDelay, f.stopDelay
	a.RestartBackoff = f.restartBackoff
	a.RunTime, a.DisableEvents = f.runTime, f.noEvents
	a.IgnoreMissingDependencies = f.ignoreDeps
	a.UnpullableImages = f.unpullable
	a.LeaseDuration, a.LeaseRenewInterval = f.leaseDuration, f.renew
	a.Capacity = capacity
	a.ServingAddress, a.AdvertiseAddress = f.kubeletAddr, f.kubeletAdvertise
	return nil
}
