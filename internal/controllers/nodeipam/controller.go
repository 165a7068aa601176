package nodeipam

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/setpoint-dev/setpoint/controller"
	"github.com/setpoint-dev/setpoint/handler"
	"github.com/setpoint-dev/setpoint/informer"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/reconcile"
	"github.com/setpoint-dev/setpoint/record"
	"github.com/setpoint-dev/setpoint/rest"
)

// Defaults: the pod network of setpoint's simulated nodes (each takes the
// i-th /24 of 10.128.0.0/9) and Kubernetes' worker count and retries.
const (
	DefaultClusterCIDR      = "10.128.0.0/9"
	DefaultNodeCIDRMaskSize = 24
	// DefaultWorkers is Kubernetes' cidrUpdateWorkers.
	DefaultWorkers = 30
	// updateRetries is Kubernetes' cidrUpdateRetries.
	updateRetries = 3
	// ControllerName names the controller (queue, metrics, logs).
	ControllerName = "node-ipam"
	// EventSource is the component of the Events the controller records.
	EventSource = "cidrAllocator"
)

var nodesGVR = corev1.SchemeGroupVersion.WithResource("nodes")

// Options configure the controller; the zero value means the defaults.
type Options struct {
	// ClusterCIDR is the IPv4 range node CIDRs are taken from
	// (kube-controller-manager's --cluster-cidr; default 10.128.0.0/9).
	ClusterCIDR string
	// NodeCIDRMaskSize is the prefix length of a node's CIDR
	// (--node-cidr-mask-size; default 24).
	NodeCIDRMaskSize int
	// Workers is the number of nodes handled concurrently (default 30).
	Workers int
}

type reconciler struct {
	log      *slog.Logger
	nodeInf  *informer.Informer[*corev1.Node]
	nodes    *rest.Resource[*corev1.Node, *corev1.NodeList]
	recorder record.Recorder
	metrics  *metrics
	cluster  string

	mu  sync.Mutex
	set *cidrSet // guarded by mu
}

// ServiceAccount is the controller's identity: kube-controller-manager's
// ServiceAccount for it in kube-system (see manager.ClientFor).
const ServiceAccount = "node-controller"

// Add registers the node IPAM controller on mgr (leader only).
func Add(mgr *manager.Manager, opts Options) error {
	ctrl, _, err := newController(mgr, opts)
	if err != nil {
		return err
	}
	return mgr.Add(ctrl)
}

func newController(mgr *manager.Manager, opts Options) (*controller.Controller, *reconciler, error) {
	c, err := mgr.ClientFor(ServiceAccount)
	if err != nil {
		return nil, nil, fmt.Errorf("nodeipam: %w", err)
	}
	if opts.ClusterCIDR == "" {
		opts.ClusterCIDR = DefaultClusterCIDR
	}
	if opts.NodeCIDRMaskSize == 0 {
		opts.NodeCIDRMaskSize = DefaultNodeCIDRMaskSize
	}
	if opts.Workers <= 0 {
		opts.Workers = DefaultWorkers
	}
	set, err := newCIDRSet(opts.ClusterCIDR, opts.NodeCIDRMaskSize)
	if err != nil {
		return nil, nil, fmt.Errorf("nodeipam: %w", err)
	}
	rec, err := mgr.EventRecorderFor(ServiceAccount, EventSource)
	if err != nil {
		return nil, nil, fmt.Errorf("nodeipam: %w", err)
	}
	m, err := newMetrics(mgr.Registry())
	if err != nil {
		return nil, nil, fmt.Errorf("nodeipam: %w", err)
	}
	r := &reconciler{
		log:      mgr.Logger().With("controller", ControllerName),
		nodeInf:  manager.InformerFor[*corev1.Node](mgr, nodesGVR, false),
		nodes:    rest.For[*corev1.Node, *corev1.NodeList](c, nodesGVR, false),
		recorder: rec, metrics: m, cluster: set.cluster.String(), set: set,
	}
	m.max.WithLabelValues(r.cluster).Set(float64(set.max))
	copts := mgr.ControllerOptions()
	copts.MaxConcurrentReconciles = opts.Workers
	ctrl, err := controller.New(ControllerName, r, copts)
	if err != nil {
		return nil, nil, fmt.Errorf("nodeipam: %w", err)
	}
	if err := ctrl.Watch(controller.Kind(r.nodeInf, "v1 nodes", handler.Object[*corev1.Node]())); err != nil {
		return nil, nil, fmt.Errorf("nodeipam: %w", err)
	}
	return ctrl, r, nil
}

// nodeCIDRs returns the node's pod CIDRs (podCIDRs, else podCIDR).
func nodeCIDRs(n *corev1.Node) []string {
	if len(n.Spec.PodCIDRs) > 0 {
		return n.Spec.PodCIDRs
	}
	if n.Spec.PodCIDR != "" {
		return []string{n.Spec.PodCIDR}
	}
	return nil
}

// Reconcile implements reconcile.Reconciler for one node (key: its name).
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	node, err := r.nodeInf.Lister().Get(req.Name)
	switch {
	case apierrors.IsNotFound(err):
		r.release(req.Name)
		return reconcile.Result{}, nil
	case err != nil:
		return reconcile.Result{}, fmt.Errorf("get node %s from cache: %w", req.Name, err)
	case node.DeletionTimestamp != nil:
		r.release(node.Name)
		return reconcile.Result{}, nil
	}
	if cidrs := nodeCIDRs(node); len(cidrs) > 0 {
		r.mu.Lock()
		r.occupy(node.Name, cidrs)
		r.mu.Unlock()
		return reconcile.Result{}, nil
	}
	return reconcile.Result{}, r.allocate(ctx, node)
}

// occupy records a node's CIDRs; a CIDR outside the cluster CIDR, or
// already another node's, is only logged. Call with mu held.
func (r *reconciler) occupy(node string, cidrs []string) {
	for _, c := range cidrs {
		if !r.set.occupy(node, c) {
			r.log.Info("node CIDR not occupied: outside the cluster CIDR or already another node's", "node", node, "cidr", c)
		}
	}
	r.metrics.usage.WithLabelValues(r.cluster).Set(float64(r.set.used()) / float64(r.set.max))
}

func (r *reconciler) release(node string) {
	r.mu.Lock()
	n := r.set.release(node)
	used := r.set.used()
	r.mu.Unlock()
	if n > 0 {
		r.log.Info("released node CIDR", "node", node)
		r.metrics.releases.WithLabelValues(r.cluster).Add(float64(n))
		r.metrics.usage.WithLabelValues(r.cluster).Set(float64(used) / float64(r.set.max))
	}
}

// allocate takes a free CIDR for the node and writes it to spec.podCIDR
// and spec.podCIDRs. Every CIDR any cached node carries is marked taken
// first, so that a node whose own event is still queued (one the
// simulated nodes numbered themselves) never shares its CIDR.
func (r *reconciler) allocate(ctx context.Context, node *corev1.Node) error {
	all, err := r.nodeInf.Lister().List(labels.Everything())
	if err != nil {
		return fmt.Errorf("list nodes from cache: %w", err)
	}
	r.mu.Lock()
	for _, n := range all {
		if n.DeletionTimestamp == nil {
			if cidrs := nodeCIDRs(n); len(cidrs) > 0 {
				r.occupy(n.Name, cidrs)
			}
		}
	}
	cidr, tries, err := r.set.allocateNext(node.Name)
	r.mu.Unlock()
	r.metrics.tries.WithLabelValues(r.cluster).Observe(float64(tries))
	if err != nil {
		r.recordStatusChange(node, "CIDRNotAvailable")
		return fmt.Errorf("failed to allocate cidr from cluster cidr at idx:0: %w", err)
	}
	r.metrics.allocations.WithLabelValues(r.cluster).Inc()
	return r.assign(ctx, node, cidr)
}

// assign writes cidr to the node unless it has a CIDR by now; it gives
// the CIDR back if the node does not take it.
func (r *reconciler) assign(ctx context.Context, node *corev1.Node, cidr string) error {
	giveBack := func() {
		r.mu.Lock()
		r.set.releaseCIDR(node.Name, cidr)
		r.mu.Unlock()
		r.metrics.releases.WithLabelValues(r.cluster).Inc()
	}
	cur, err := r.nodes.Get(ctx, node.Name, metav1.GetOptions{})
	if err != nil {
		giveBack()
		return fmt.Errorf("get node %s: %w", node.Name, err)
	}
	if have := nodeCIDRs(cur); len(have) > 0 {
		if len(have) == 1 && have[0] == cidr {
			return nil
		}
		r.log.Info("node already has a CIDR allocated; releasing the new one", "node", node.Name, "podCIDRs", have)
		giveBack()
		r.mu.Lock()
		r.occupy(node.Name, have)
		r.mu.Unlock()
		return nil
	}
	patch, err := json.Marshal(map[string]any{"spec": map[string]any{"podCIDR": cidr, "podCIDRs": []string{cidr}}})
	if err != nil {
		giveBack()
		return fmt.Errorf("node CIDR patch: %w", err)
	}
	for range updateRetries {
		if _, err = r.nodes.Patch(ctx, node.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err == nil {
			r.log.Info("set node PodCIDR", "node", node.Name, "podCIDRs", []string{cidr})
			return nil
		}
	}
	r.log.Error("failed to update node PodCIDR after multiple attempts", "node", node.Name, "podCIDRs", []string{cidr}, "err", err)
	r.recordStatusChange(node, "CIDRAssignmentFailed")
	// A timed-out write may have landed: keep the CIDR rather than risk
	// handing it out twice.
	if !apierrors.IsServerTimeout(err) {
		giveBack()
	}
	return fmt.Errorf("patch pod CIDR of node %s: %w", node.Name, err)
}

// recordStatusChange records Kubernetes' node status change event.
func (r *reconciler) recordStatusChange(node *corev1.Node, status string) {
	r.recorder.Eventf(node, corev1.EventTypeWarning, status, "Node %s status is now: %s", node.Name, status)
}
