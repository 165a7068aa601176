package nodelifecycle

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/setpoint-dev/setpoint/cache"
	"github.com/setpoint-dev/setpoint/informer"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/record"
	"github.com/setpoint-dev/setpoint/rest"
	"github.com/setpoint-dev/setpoint/workqueue"
)

// Defaults of Options, Kubernetes' values.
const (
	DefaultNodeMonitorPeriod      = 5 * time.Second
	DefaultNodeMonitorGracePeriod = 40 * time.Second
	DefaultWorkers                = 8
	// LeaseNamespace holds the kubelets' Leases.
	LeaseNamespace = "kube-node-lease"
)

// Options configure the controller. The zero value of every field selects
// the documented default.
type Options struct {
	// NodeMonitorPeriod is how often node health is checked (default 5s).
	NodeMonitorPeriod time.Duration
	// NodeMonitorGracePeriod is how long a node may go without a Lease
	// renewal or Ready heartbeat before it is marked Unknown (default 40s).
	NodeMonitorGracePeriod time.Duration
	// Workers is the number of eviction workers (default 8).
	Workers int
	// Clock drives monitoring, eviction timeouts and timestamps; default
	// the manager's clock.
	Clock clock.WithTicker
}

var (
	podsGVR   = corev1.SchemeGroupVersion.WithResource("pods")
	nodesGVR  = corev1.SchemeGroupVersion.WithResource("nodes")
	leasesGVR = coordinationv1.SchemeGroupVersion.WithResource("leases")
)

// podNodeIndex files pods under their node name on the shared pod
// informer.
const podNodeIndex = "nodelifecycle.setpoint.dev/node"

// Controller watches node health and evicts pods from NoExecute-tainted
// nodes. See the package documentation.
type Controller struct {
	opts  Options
	clock clock.WithTicker
	log   *slog.Logger

	pods  *rest.Resource[*corev1.Pod, *corev1.PodList]
	nodes *rest.Resource[*corev1.Node, *corev1.NodeList]

	nodeInf  *informer.Informer[*corev1.Node]
	leaseInf *informer.Informer[*coordinationv1.Lease]
	podInf   *informer.Informer[*corev1.Pod]

	nodeEvents, podEvents record.Recorder
	// queue holds pods to check for eviction.
	queue *workqueue.RateLimitingQueue[types.NamespacedName]

	// health is the monitor's memory of each node; only the monitor
	// goroutine touches it.
	health map[string]*nodeHealth
}

// nodeHealth is what the monitor last observed of one node.
type nodeHealth struct {
	// probe is when the monitor last saw the node's Lease renewTime or
	// Ready heartbeat advance (its own clock, as Kubernetes measures).
	probe time.Time
	// heartbeat and renew are the values seen then.
	heartbeat, renew time.Time
	// ready is the Ready status seen at the previous pass ("" at first).
	ready corev1.ConditionStatus
	// markPods is set while the node's pods still have to be marked not
	// ready (a failed attempt is retried at the next pass).
	markPods bool
}

// ServiceAccount is the controller's identity: kube-controller-manager's
// ServiceAccount for it in kube-system (see manager.ClientFor).
const ServiceAccount = "node-controller"

// Add registers the controller on mgr; it runs only while mgr leads.
func Add(mgr *manager.Manager, opts Options) error {
	_, err := New(mgr, opts)
	return err
}

// New builds the controller and adds it to mgr.
func New(mgr *manager.Manager, opts Options) (*Controller, error) {
	c, err := mgr.ClientFor(ServiceAccount)
	if err != nil {
		return nil, fmt.Errorf("nodelifecycle: %w", err)
	}
	setDefaults(&opts, mgr.ControllerOptions().Clock)
	nodeEvents, err := mgr.EventRecorderFor(ServiceAccount, "node-controller")
	if err != nil {
		return nil, fmt.Errorf("nodelifecycle: %w", err)
	}
	podEvents, err := mgr.EventRecorderFor(ServiceAccount, "taint-eviction-controller")
	if err != nil {
		return nil, fmt.Errorf("nodelifecycle: %w", err)
	}
	ctrl := &Controller{
		opts: opts, clock: opts.Clock, log: mgr.Logger().With("controller", "node-lifecycle"),
		pods:       rest.For[*corev1.Pod, *corev1.PodList](c, podsGVR, true),
		nodes:      rest.For[*corev1.Node, *corev1.NodeList](c, nodesGVR, false),
		nodeInf:    manager.InformerFor[*corev1.Node](mgr, nodesGVR, false),
		leaseInf:   manager.InformerFor[*coordinationv1.Lease](mgr, leasesGVR, true),
		podInf:     manager.InformerFor[*corev1.Pod](mgr, podsGVR, true),
		nodeEvents: nodeEvents, podEvents: podEvents,
		queue: workqueue.NewRateLimiting(workqueue.NewExponentialRateLimiter[types.NamespacedName](5*time.Millisecond, 30*time.Second),
			workqueue.Config{Name: "node-lifecycle-eviction", Clock: opts.Clock}),
		health: map[string]*nodeHealth{},
	}
	if err := ctrl.installIndex(); err != nil {
		return nil, fmt.Errorf("nodelifecycle: pod index: %w", err)
	}
	if err := mgr.Add(ctrl); err != nil {
		return nil, fmt.Errorf("nodelifecycle: %w", err)
	}
	return ctrl, nil
}

func setDefaults(o *Options, mgrClock clock.WithTicker) {
	for _, d := range []struct {
		v   *time.Duration
		def time.Duration
	}{{&o.NodeMonitorPeriod, DefaultNodeMonitorPeriod}, {&o.NodeMonitorGracePeriod, DefaultNodeMonitorGracePeriod}} {
		if *d.v <= 0 {
			*d.v = d.def
		}
	}
	if o.Workers <= 0 {
		o.Workers = DefaultWorkers
	}
	if o.Clock == nil {
		o.Clock = mgrClock
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
}

func (c *Controller) installIndex() error {
	for _, name := range c.podInf.Indexer().IndexNames() {
		if name == podNodeIndex {
			return nil
		}
	}
	return c.podInf.Indexer().AddIndexers(cache.Indexers[*corev1.Pod]{podNodeIndex: func(p *corev1.Pod) ([]string, error) {
		if p.Spec.NodeName == "" {
			return nil, nil
		}
		return []string{p.Spec.NodeName}, nil
	}})
}

// podsOf returns the cached pods bound to the node (shared objects).
func (c *Controller) podsOf(node string) []*corev1.Pod {
	pods, err := c.podInf.Indexer().ByIndex(podNodeIndex, node)
	if err != nil {
		c.log.Error("list pods of node", "node", node, "err", err)
	}
	return pods
}

// Start runs the monitor and the eviction workers until ctx ends. It
// implements manager.Runnable (and needs leader election).
func (c *Controller) Start(ctx context.Context) error {
	defer c.queue.ShutDown()
	if !informer.WaitForCacheSync(ctx, c.nodeInf.HasSynced, c.leaseInf.HasSynced, c.podInf.HasSynced) {
		return nil
	}
	nreg, err := c.nodeInf.AddEventHandler(nodeHandler{c}, informer.HandlerOptions{Name: "node-lifecycle"})
	if err != nil {
		return fmt.Errorf("nodelifecycle: node handler: %w", err)
	}
	defer func() { _ = c.nodeInf.RemoveEventHandler(nreg) }()
	preg, err := c.podInf.AddEventHandler(podHandler{c}, informer.HandlerOptions{Name: "node-lifecycle"})
	if err != nil {
		return fmt.Errorf("nodelifecycle: pod handler: %w", err)
	}
	defer func() { _ = c.podInf.RemoveEventHandler(preg) }()

	var wg sync.WaitGroup
	wg.Go(func() { c.monitorLoop(ctx) })
	for range c.opts.Workers {
		wg.Go(func() { c.worker(ctx) })
	}
	<-ctx.Done()
	c.queue.ShutDown()
	wg.Wait()
	return nil
}

func (c *Controller) monitorLoop(ctx context.Context) {
	tick := c.clock.NewTicker(c.opts.NodeMonitorPeriod)
	defer tick.Stop()
	for {
		c.monitorNodes(ctx)
		select {
		case <-ctx.Done():
			return
		case <-tick.C():
		}
	}
}
