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
	// images tells which images the nodes cannot pull.
	images imagePolicy

	// shared writes for the nodes without an identity of their own
	// (Options.NodeCredentials unset); each node's api is this or its own.
	shared *nodeAPI

	// podInf caches the bound pods (all nodes, ours or not); nodeInf all
	// nodes; deps watch what pods need before they run (deps.go). All
	// three read with the manager's client and exist only when the nodes
	// have no identity of their own; otherwise each node reads as itself
	// (node.reads, reads.go).
	podInf  *informer.Informer[*corev1.Pod]
	nodeInf *informer.Informer[*corev1.Node]
	deps    deps
	// podNodes maps, when each node reads as itself, a pod's key to the
	// nodes whose caches hold a pod of that name (one, but for a moment
	// when a name moves from one node to another). Guarded by pnMu.
	pnMu     sync.Mutex
	podNodes map[types.NamespacedName][]*node
	// refsAt is the node whose object watches a pod's references are
	// registered with (node reads only). Guarded by mu.
	refsAt map[types.NamespacedName]*node
	// bg runs the node informers and object watches under Start's
	// context; set by Start (guarded by mu).
	bg *background
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
	// sims are the simulation states of the node's pods (admission
	// judges a pod against them). Guarded by Agent.mu.
	sims map[types.NamespacedName]*podState
	// recorder writes the node's events (nil when events are off).
	recorder record.Recorder
	// api is what the node writes with: its own identity
	// (Options.NodeCredentials) or the agent's shared client.
	api *nodeAPI
	// reads is what the node reads as itself; nil without
	// Options.NodeCredentials (the agent's shared informers then).
	reads *nodeReads
}

// nodeAPI is the client one node writes its Node, Lease, pod statuses,
// pod deletions and events with.
type nodeAPI struct {
	client          *rest.Client
	pods            *rest.Resource[*corev1.Pod, *corev1.PodList]
	nodes           *rest.Resource[*corev1.Node, *corev1.NodeList]
	leases          *rest.Resource[*coordinationv1.Lease, *coordinationv1.LeaseList]
	pvcs            *rest.Resource[*corev1.PersistentVolumeClaim, *corev1.PersistentVolumeClaimList]
	serviceAccounts *rest.Resource[*corev1.ServiceAccount, *corev1.ServiceAccountList]
}

func newNodeAPI(c *rest.Client) *nodeAPI {
	return &nodeAPI{
		client: c,
		pods:   rest.For[*corev1.Pod, *corev1.PodList](c, podsGVR, true),
		nodes:  rest.For[*corev1.Node, *corev1.NodeList](c, nodesGVR, false),
		leases: rest.For[*coordinationv1.Lease, *coordinationv1.LeaseList](c, leasesGVR, true).Namespace(LeaseNamespace),
		pvcs:   rest.For[*corev1.PersistentVolumeClaim, *corev1.PersistentVolumeClaimList](c, pvcsGVR, true),
		serviceAccounts: rest.For[*corev1.ServiceAccount, *corev1.ServiceAccountList](
			c, serviceAccountsGVR, true),
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
	images, err := newImagePolicy(opts.UnpullableImages)
	if err != nil {
		return nil, err
	}
	c := mgr.Client()
	a := &Agent{
		opts: opts, clock: opts.Clock, log: mgr.Logger().With("component", "nodeagent"), images: images,
		shared:     newNodeAPI(c),
		byName:     map[string]*node{},
		sims:       map[types.NamespacedName]*podState{},
		blocked:    map[string]map[types.NamespacedName]struct{}{},
		podNodes:   map[types.NamespacedName][]*node{},
		refsAt:     map[types.NamespacedName]*node{},
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
			if cfg.QPS == 0 {
				cp := *cfg
				cp.QPS, cp.Burst = opts.KubeAPIQPS, opts.KubeAPIBurst
				cfg = &cp
			}
			nc, err := rest.New(cfg)
			if err != nil {
				return nil, fmt.Errorf("nodeagent: client of node %s: %w", n.name, err)
			}
			n.api = newNodeAPI(nc)
			n.reads = newNodeReads(n.name, n.api, a.log, a.requeueBlocked)
		}
		a.byName[n.name] = n
		a.ordered = append(a.ordered, n)
	}
	if opts.NodeCredentials == nil {
		a.podInf = informer.For[*corev1.Pod, *corev1.PodList](mgr.Factory(), podsGVR, true, informer.WithFieldSelector(boundPods))
		a.nodeInf = manager.InformerFor[*corev1.Node](mgr, nodesGVR, false)
		a.deps = newDeps(mgr)
		if err := a.installIndex(); err != nil {
			return nil, fmt.Errorf("nodeagent: pod index: %w", err)
		}
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
	readCtx, stopReads := context.WithCancel(ctx)
	bg := &background{ctx: readCtx}
	defer func() { stopReads(); bg.stop() }()
	a.mu.Lock()
	a.bg = bg
	a.mu.Unlock()
	for _, n := range a.ordered {
		if n.reads != nil {
			n.reads.start(bg.run)
		}
	}
	if err := a.registerAll(ctx); err != nil {
		return err
	}
	close(a.registered)
	if !informer.WaitForCacheSync(ctx, a.cachesSynced) {
		return nil // stopped before the caches synced
	}
	wg.Go(func() { a.heartbeatLoop(ctx) })
	events, err := a.startEvents()
	if err != nil {
		return err
	}
	if events != nil {
		defer a.stopEvents(events)
	}
	if a.podInf != nil {
		unwatch, err := a.watchDeps()
		if err != nil {
			return err
		}
		defer unwatch()
	}
	a.adoptIPs()
	unhandle, err := a.handlePods()
	if err != nil {
		return err
	}
	defer unhandle()

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

// cachesSynced reports whether the pod and node caches (and, reading with
// the manager's client, the dependency informers) hold their first lists.
func (a *Agent) cachesSynced() bool {
	if a.podInf != nil {
		return a.podInf.HasSynced() && a.nodeInf.HasSynced() && a.deps.hasSynced()
	}
	for _, n := range a.ordered {
		if !n.reads.hasSynced() {
			return false
		}
	}
	return true
}

// handlePods registers the pod handlers: one on the shared informer, or
// one per node on its own. It returns a function removing them.
func (a *Agent) handlePods() (func(), error) {
	opts := informer.HandlerOptions{Name: "nodeagent"}
	if a.podInf != nil {
		reg, err := a.podInf.AddEventHandler(podHandler{a: a}, opts)
		if err != nil {
			return nil, fmt.Errorf("nodeagent: pod handler: %w", err)
		}
		return func() { _ = a.podInf.RemoveEventHandler(reg) }, nil
	}
	var undo []func()
	remove := func() {
		for _, f := range undo {
			f()
		}
	}
	for _, n := range a.ordered {
		inf := n.reads.pods
		reg, err := inf.AddEventHandler(podHandler{a: a, n: n}, opts)
		if err != nil {
			remove()
			return nil, fmt.Errorf("nodeagent: pod handler of node %s: %w", n.name, err)
		}
		undo = append(undo, func() { _ = inf.RemoveEventHandler(reg) })
	}
	return remove, nil
}

// background runs functions under one context, and waits for them.
type background struct {
	ctx     context.Context
	mu      sync.Mutex
	stopped bool
	wg      sync.WaitGroup
}

// run starts f(ctx) unless stop was called; it reports whether it did.
func (b *background) run(f func(context.Context)) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stopped {
		return false
	}
	b.wg.Go(func() { f(b.ctx) })
	return true
}

// stop waits for every function run started; cancel the context first.
func (b *background) stop() {
	b.mu.Lock()
	b.stopped = true
	b.mu.Unlock()
	b.wg.Wait()
}
