package podgc

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/clock"

	"github.com/setpoint-dev/setpoint/informer"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/rest"
)

// Kubernetes' defaults.
const (
	DefaultTerminatedPodThreshold = 12500
	DefaultGCCheckPeriod          = 20 * time.Second
	DefaultQuarantineTime         = 40 * time.Second
	// DefaultParallelDeletes bounds the deletions in flight at once
	// (Kubernetes starts one goroutine per pod and lets its client's QPS
	// limit them; our API server answers 429 past 200 mutating requests).
	DefaultParallelDeletes = 32
)

// Options configure the collector; the zero value means Kubernetes'
// defaults.
type Options struct {
	// TerminatedPodThreshold is how many terminated pods may exist before
	// the oldest are deleted (default 12500); negative disables that part
	// (kube-controller-manager's --terminated-pod-gc-threshold <= 0).
	TerminatedPodThreshold int
	// GCCheckPeriod is the time between passes (default 20 s).
	GCCheckPeriod time.Duration
	// QuarantineTime is how long a missing node must stay missing before
	// its pods are orphans (default 40 s).
	QuarantineTime time.Duration
	// ParallelDeletes bounds concurrent deletions (default 32).
	ParallelDeletes int
	// Clock drives the passes and the quarantine; default the manager's.
	Clock clock.WithTicker
}

var (
	podsGVR  = corev1.SchemeGroupVersion.WithResource("pods")
	nodesGVR = corev1.SchemeGroupVersion.WithResource("nodes")
)

// Collector is the pod garbage collector; see the package documentation.
type Collector struct {
	opts    Options
	log     *slog.Logger
	podInf  *informer.Informer[*corev1.Pod]
	nodeInf *informer.Informer[*corev1.Node]
	pods    *rest.Resource[*corev1.Pod, *corev1.PodList]
	nodes   *rest.Resource[*corev1.Node, *corev1.NodeList]
	metrics *metrics
	// quarantine maps a missing node's name to when a pass first saw it
	// missing; only the collector's goroutine touches it.
	quarantine map[string]time.Time
}

// ServiceAccount is the controller's identity: kube-controller-manager's
// ServiceAccount for it in kube-system (see manager.ClientFor).
const ServiceAccount = "pod-garbage-collector"

// Add registers the collector on mgr; it runs only while mgr leads.
func Add(mgr *manager.Manager, opts Options) error {
	_, err := New(mgr, opts)
	return err
}

// New builds the collector and adds it to mgr.
func New(mgr *manager.Manager, opts Options) (*Collector, error) {
	c, err := mgr.ClientFor(ServiceAccount)
	if err != nil {
		return nil, fmt.Errorf("podgc: %w", err)
	}
	setDefaults(&opts, mgr.ControllerOptions().Clock)
	m, err := newMetrics(mgr.Registry())
	if err != nil {
		return nil, fmt.Errorf("podgc: %w", err)
	}
	gc := &Collector{
		opts: opts, log: mgr.Logger().With("controller", "pod-garbage-collector"),
		podInf:  manager.InformerFor[*corev1.Pod](mgr, podsGVR, true),
		nodeInf: manager.InformerFor[*corev1.Node](mgr, nodesGVR, false),
		pods:    rest.For[*corev1.Pod, *corev1.PodList](c, podsGVR, true),
		nodes:   rest.For[*corev1.Node, *corev1.NodeList](c, nodesGVR, false),
		metrics: m, quarantine: map[string]time.Time{},
	}
	if err := mgr.Add(gc); err != nil {
		return nil, fmt.Errorf("podgc: %w", err)
	}
	return gc, nil
}

func setDefaults(o *Options, mgrClock clock.WithTicker) {
	if o.TerminatedPodThreshold == 0 {
		o.TerminatedPodThreshold = DefaultTerminatedPodThreshold
	}
	if o.GCCheckPeriod <= 0 {
		o.GCCheckPeriod = DefaultGCCheckPeriod
	}
	if o.QuarantineTime <= 0 {
		o.QuarantineTime = DefaultQuarantineTime
	}
	if o.ParallelDeletes <= 0 {
		o.ParallelDeletes = DefaultParallelDeletes
	}
	if o.Clock == nil {
		o.Clock = mgrClock
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
}

// Start runs a pass every GCCheckPeriod until ctx ends. It implements
// manager.Runnable (and needs leader election).
func (gc *Collector) Start(ctx context.Context) error {
	if !informer.WaitForCacheSync(ctx, gc.podInf.HasSynced, gc.nodeInf.HasSynced) {
		return nil
	}
	tick := gc.opts.Clock.NewTicker(gc.opts.GCCheckPeriod)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C():
		}
		gc.pass(ctx)
	}
}

// pass is one collection over the informers' current state.
func (gc *Collector) pass(ctx context.Context) {
	pods, err := gc.podInf.Lister().List(labels.Everything())
	if err != nil {
		gc.log.Error("list pods", "err", err)
		return
	}
	nodes, err := gc.nodeInf.Lister().List(labels.Everything())
	if err != nil {
		gc.log.Error("list nodes", "err", err)
		return
	}
	if gc.opts.TerminatedPodThreshold > 0 {
		gc.gcTerminated(ctx, pods)
	}
	gc.gcOutOfService(ctx, pods)
	gc.gcOrphaned(ctx, pods, nodes)
	gc.gcUnscheduledTerminating(ctx, pods)
}
