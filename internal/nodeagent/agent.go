package nodeagent

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/setpoint-dev/setpoint/informer"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/record"
	"github.com/setpoint-dev/setpoint/rest"
	"github.com/setpoint-dev/setpoint/workqueue"
)

// Resources the agent reads and writes.
var (
	podsGVR   = corev1.SchemeGroupVersion.WithResource("pods")
	nodesGVR  = corev1.SchemeGroupVersion.WithResource("nodes")
	leasesGVR = coordinationv1.SchemeGroupVersion.WithResource("leases")
)

// boundPods selects the pods bound to some node; the API server filters
// the watch (spec.nodeName is a selectable pod field), so unscheduled pods
// never reach the agent.
const boundPods = "spec.nodeName!="

// Agent simulates Options.Count kubelets. See the package documentation.
type Agent struct {
	opts  Options
	clock clock.WithTicker
	log   *slog.Logger

	// shared writes for the nodes without an identity of their own
	// (Options.NodeCredentials unset); each node's api is this or its own.
	shared *nodeAPI

	// podInf caches the bound pods (all nodes, ours or not); nodeInf all
	// nodes.
	podInf  *informer.Informer[*corev1.Pod]
	nodeInf *informer.Informer[*corev1.Node]
	// deps watch what pods need before they run (deps.go).
	deps deps
	// queue holds pod keys; one worker per key at a time. Its delays
	// (start, stop, restart back-off) run on opts.Clock, the simulated time.
	queue *workqueue.Queue[types.NamespacedName]
	// retry spaces out the retries of failed syncs. A failed write is a
	// real-world event, so its back-off runs on wall-clock time (retryAfter)
	// and never waits for a fake clock to be stepped.
	retry      workqueue.RateLimiter[types.NamespacedName]
	retryAfter func(time.Duration, func()) *time.Timer

	// byName maps each simulated node's name to its state; the map is
	// fixed by New.
	byName map[string]*node
	// ordered lists the same nodes by index.
	ordered []*node

	// mu guards the mutable fields of every node and every podState, and
	// the pods map.
	mu sync.Mutex
	// sims is the simulation state of pods on our nodes, by key.
	sims map[types.NamespacedName]*podState
	// blocked holds, by namespace, the pods waiting for a dependency.
	blocked map[string]map[types.NamespacedName]struct{}
	// registered is closed once every node is registered; before that
	// the injection methods still work (they only flip flags).
	registered chan struct{}
	// kick asks the heartbeat loop for an immediate round (capacity 1).
	kick chan struct{}
	// kubelet is the nodes' kubelet endpoint, open while Start runs.
	// Guarded by mu; its fields are fixed once set.
	kubelet *endpoint
	// meter keeps the simulated cpu counters (usage.go).
	meter *meter
}

// node is one simulated kubelet.
type node struct {
	name  string
	index int
	// ip is the address the node reports (the kubelet endpoint's), set
	// by Start before registration.
	ip string
	// dead, when set (StopHeartbeat), stops heartbeats and pod handling.
	// Guarded by Agent.mu.
	dead bool
	// ipam hands out pod IPs; nil until registration read the node's pod
	// CIDR. Guarded by Agent.mu.
	ipam *ipam
	// uid is the Node's uid once registered (the Lease's owner).
	// Guarded by Agent.mu, like lease and lastReport.
	uid types.UID
	// lease is the last Lease written or read (nil: read it again).
	lease *coordinationv1.Lease
	// lastReport is when the status was last posted (zero: post at the
	// next heartbeat round).
	lastReport time.Time
	// images are the images the node has pulled (guarded by Agent.mu).
	images map[string]bool
	// recorder writes the node's events (nil when events are off).
	recorder record.Recorder
	// api is what the node writes with: its own identity
	// (Options.NodeCredentials) or the agent's shared client.
	api *nodeAPI
}

// nodeAPI is the client one node writes its Node, Lease, pod statuses,
// pod deletions and events with.
type nodeAPI struct {
	client *rest.Client
	pods   *rest.Resource[*corev1.Pod, *corev1.PodList]
	nodes  *rest.Resource[*corev1.Node, *corev1.NodeList]
	leases *rest.Resource[*coordinationv1.Lease, *coordinationv1.LeaseList]
}

func newNodeAPI(c *rest.Client) *nodeAPI {
	return &nodeAPI{
		client: c,
		pods:   rest.For[*corev1.Pod, *corev1.PodList](c, podsGVR, true),
		nodes:  rest.For[*corev1.Node, *corev1.NodeList](c, nodesGVR, false),
		leases: rest.For[*coordinationv1.Lease, *coordinationv1.LeaseList](c, leasesGVR, true).Namespace(LeaseNamespace),
	}
}

// Add builds an agent on mgr (see New) for callers that need no handle.
func Add(mgr *manager.Manager, opts Options) error {
	_, err := New(mgr, opts)
	return err
}

// New builds an agent and adds it to mgr as a runnable that runs whether
// or not the manager leads (a kubelet does not take part in leader
// election). The returned handle injects failures.
func New(mgr *manager.Manager, opts Options) (*Agent, error) {
	if err := opts.setDefaults(mgr.ControllerOptions().Clock); err != nil {
		return nil, err
	}
	c := mgr.Client()
	a := &Agent{
		opts: opts, clock: opts.Clock, log: mgr.Logger().With("component", "nodeagent"),
		shared:     newNodeAPI(c),
		podInf:     informer.For[*corev1.Pod, *corev1.PodList](mgr.Factory(), podsGVR, true, informer.WithFieldSelector(boundPods)),
		nodeInf:    manager.InformerFor[*corev1.Node](mgr, nodesGVR, false),
		byName:     map[string]*node{},
		sims:       map[types.NamespacedName]*podState{},
		blocked:    map[string]map[types.NamespacedName]struct{}{},
		deps:       newDeps(mgr),
		registered: make(chan struct{}),
		kick:       make(chan struct{}, 1),
		queue:      workqueue.NewWithConfig[types.NamespacedName](workqueue.Config{Name: "nodeagent", Clock: opts.Clock}),
		retry:      workqueue.NewExponentialRateLimiter[types.NamespacedName](retryBase, retryMax),
		retryAfter: time.AfterFunc,
		meter:      newMeter(),
	}
	for i := range opts.Count {
		n := &node{name: opts.NamePrefix + strconv.Itoa(i), index: i, api: a.shared}
		if opts.NodeCredentials != nil {
			cfg, err := opts.NodeCredentials(n.name)
			if err != nil {
				return nil, fmt.Errorf("nodeagent: credentials of node %s: %w", n.name, err)
			}
			if cfg.ContentType == "" {
				// In protobuf, as the kubelet's --kube-api-content-type.
				cp := *cfg
				cp.ContentType = rest.ContentTypeProtobuf
				cfg = &cp
			}
			nc, err := rest.New(cfg)
			if err != nil {
				return nil, fmt.Errorf("nodeagent: client of node %s: %w", n.name, err)
			}
			n.api = newNodeAPI(nc)
		}
		a.byName[n.name] = n
		a.ordered = append(a.ordered, n)
	}
	if err := a.installIndex(); err != nil {
		return nil, fmt.Errorf("nodeagent: pod index: %w", err)
	}
	if err := mgr.Add(a); err != nil {
		return nil, fmt.Errorf("nodeagent: %w", err)
	}
	return a, nil
}

// NeedLeaderElection reports false: simulated kubelets run on every
// replica of the process that hosts them.
func (a *Agent) NeedLeaderElection() bool { return false }

// NodeNames returns the names of the simulated nodes, by index.
func (a *Agent) NodeNames() []string {
	out := make([]string, len(a.ordered))
	for i, n := range a.ordered {
		out[i] = n.name
	}
	return out
}

// Registered is closed once every node is registered and has its Lease.
func (a *Agent) Registered() <-chan struct{} { return a.registered }

// Start registers the nodes, then runs the heartbeats and the pod workers
// until ctx ends. It implements manager.Runnable.
func (a *Agent) Start(ctx context.Context) error {
	defer a.queue.ShutDown()
	kl, err := a.listen()
	if err != nil {
		return err
	}
	a.mu.Lock()
	a.kubelet = kl
	for _, n := range a.ordered {
		n.ip = kl.ip
	}
	a.mu.Unlock()
	var wg sync.WaitGroup
	defer wg.Wait()
	serveCtx, stopServing := context.WithCancel(ctx)
	defer stopServing()
	wg.Go(func() { kl.serve(serveCtx) })
	if err := a.registerAll(ctx); err != nil {
		return err
	}
	close(a.registered)
	if !informer.WaitForCacheSync(ctx, a.podInf.HasSynced, a.nodeInf.HasSynced) {
		return nil // stopped before the caches synced
	}
	wg.Go(func() { a.heartbeatLoop(ctx) })
	if !informer.WaitForCacheSync(ctx, a.deps.hasSynced) {
		return nil
	}
	events, err := a.startEvents()
	if err != nil {
		return err
	}
	if events != nil {
		defer a.stopEvents(events)
	}
	unwatch, err := a.watchDeps()
	if err != nil {
		return err
	}
	defer unwatch()
	a.adoptIPs()
	reg, err := a.podInf.AddEventHandler(podHandler{a}, informer.HandlerOptions{Name: "nodeagent"})
	if err != nil {
		return fmt.Errorf("nodeagent: pod handler: %w", err)
	}
	defer func() { _ = a.podInf.RemoveEventHandler(reg) }()

	for range a.opts.Workers {
		wg.Go(func() { a.worker(ctx) })
	}
	<-ctx.Done()
	a.queue.ShutDown()
	return nil
}

// StopHeartbeat makes the node "die": its Lease is no longer renewed, its
// status no longer posted and its pods no longer handled, like a kubelet
// that stopped. It reports false for a node that is not simulated here.
func (a *Agent) StopHeartbeat(nodeName string) bool {
	n, ok := a.byName[nodeName]
	if !ok {
		return false
	}
	a.mu.Lock()
	n.dead = true
	a.mu.Unlock()
	a.log.Info("node stopped heartbeating", "node", nodeName)
	return true
}

// ResumeHeartbeat revives a node stopped by StopHeartbeat: the next
// heartbeat tick renews its Lease and posts its status, and its pods are
// handled again (deletions that waited are carried out).
func (a *Agent) ResumeHeartbeat(nodeName string) bool {
	n, ok := a.byName[nodeName]
	if !ok {
		return false
	}
	a.mu.Lock()
	n.dead = false
	n.lastReport = time.Time{} // post the status at the next tick
	a.mu.Unlock()
	a.log.Info("node resumed heartbeating", "node", nodeName)
	a.enqueueNode(nodeName)
	a.kickHeartbeat()
	return true
}

// alive reports whether n heartbeats.
func (a *Agent) alive(n *node) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return !n.dead
}
