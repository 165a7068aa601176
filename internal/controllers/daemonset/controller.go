package daemonset

import (
	"context"
	"fmt"
	"log/slog"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/setpoint-dev/setpoint/controller"
	"github.com/setpoint-dev/setpoint/handler"
	"github.com/setpoint-dev/setpoint/informer"
	"github.com/setpoint-dev/setpoint/internal/controllers/controllerref"
	"github.com/setpoint-dev/setpoint/internal/controllers/expectations"
	"github.com/setpoint-dev/setpoint/internal/controllers/history"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/reconcile"
	"github.com/setpoint-dev/setpoint/record"
	"github.com/setpoint-dev/setpoint/rest"
)

// Kubernetes' defaults and names.
const (
	// DefaultWorkers is the number of DaemonSets synced concurrently
	// (kube-controller-manager's --concurrent-daemonset-syncs).
	DefaultWorkers = 2
	// DefaultBurstReplicas bounds the creates and the deletes of one sync.
	DefaultBurstReplicas = 250
	// DefaultMaxInFlightWrites bounds the pod creates and deletes in flight
	// at once across all syncs (the client's QPS limit holds Kubernetes'
	// controller back instead).
	DefaultMaxInFlightWrites = 48
	// ControllerName names the controller (queue, metrics, logs).
	ControllerName = "daemonset"
	// EventSource is the component of the Events the controller records.
	EventSource = "daemonset-controller"
)

// Reasons of the controller's Events, as Kubernetes names them.
const (
	ReasonSelectingAll       = "SelectingAll"
	ReasonFailedDaemonPod    = "FailedDaemonPod"
	ReasonSucceededDaemonPod = "SucceededDaemonPod"
	ReasonSuccessfulCreate   = "SuccessfulCreate"
	ReasonSuccessfulDelete   = "SuccessfulDelete"
	ReasonFailedCreate       = "FailedCreate"
	ReasonFailedDelete       = "FailedDelete"
)

var (
	dsGVR    = appsv1.SchemeGroupVersion.WithResource("daemonsets")
	podGVR   = corev1.SchemeGroupVersion.WithResource("pods")
	nodeGVR  = corev1.SchemeGroupVersion.WithResource("nodes")
	crGVR    = appsv1.SchemeGroupVersion.WithResource("controllerrevisions")
	dsGVK    = appsv1.SchemeGroupVersion.WithKind("DaemonSet")
	dsKind   = dsGVK.GroupKind()
	crsTyped = "apps/v1 controllerrevisions"
)

// Options tune the controller; the zero value means Kubernetes' defaults.
type Options struct {
	// Workers is the number of concurrent syncs (default DefaultWorkers).
	Workers int
	// BurstReplicas bounds creates and deletes per sync (default
	// DefaultBurstReplicas).
	BurstReplicas int
	// MaxInFlightWrites bounds concurrent pod creates and deletes (default
	// DefaultMaxInFlightWrites).
	MaxInFlightWrites int
	// Clock tells availability (minReadySeconds), runs the failed-pod
	// back-off and the delayed re-syncs, and expires expectations; default
	// the real clock. The workqueue keeps the manager's clock.
	Clock clock.WithDelayedExecution
}

// reconciler holds what every sync shares. Its fields are set by
// newController and never change; informer objects are shared and never
// modified (every write starts from a deep copy).
type reconciler struct {
	log     *slog.Logger
	dsInf   *informer.Informer[*appsv1.DaemonSet]
	podInf  *informer.Informer[*corev1.Pod]
	nodeInf *informer.Informer[*corev1.Node]
	crInf   *informer.Informer[*appsv1.ControllerRevision]
	dss     *rest.Resource[*appsv1.DaemonSet, *appsv1.DaemonSetList]
	pods    *rest.Resource[*corev1.Pod, *corev1.PodList]
	crs     *rest.Resource[*appsv1.ControllerRevision, *appsv1.ControllerRevisionList]
	// history reads the revisions from the cache and writes them.
	history *history.History
	// exp counts the creates and deletes issued but not yet observed, per
	// DaemonSet key; deletions by pod key.
	exp      *expectations.UIDTracking
	recorder record.Recorder
	clock    clock.WithDelayedExecution
	burst    int
	// writes holds a token per pod create or delete in flight.
	writes chan struct{}
	// backoff paces the deletion of failed daemon pods, per DaemonSet UID
	// and node.
	backoff *backoff
	// later queues a DaemonSet again after a delay on clock.
	later *timers
}

// ServiceAccount is the controller's identity: kube-controller-manager's
// ServiceAccount for it in kube-system (see manager.ClientFor).
const ServiceAccount = "daemon-set-controller"

// Add registers the DaemonSet controller on mgr: one controller runnable
// (it runs only while the manager leads) over the manager's shared
// DaemonSet, pod, node and ControllerRevision informers.
func Add(mgr *manager.Manager, opts Options) error {
	c, r, err := newController(mgr, opts)
	if err != nil {
		return err
	}
	return mgr.Add(&runnable{c: c, r: r})
}

// runnable runs the controller and, when it stops, its timers.
type runnable struct {
	c *controller.Controller
	r *reconciler
}

// Start implements manager.Runnable.
func (rn *runnable) Start(ctx context.Context) error {
	defer rn.r.later.stopAll()
	return rn.c.Start(ctx)
}

// NeedLeaderElection implements manager.LeaderElectionRunnable.
func (rn *runnable) NeedLeaderElection() bool { return true }

func newController(mgr *manager.Manager, opts Options) (*controller.Controller, *reconciler, error) {
	api, err := mgr.ClientFor(ServiceAccount)
	if err != nil {
		return nil, nil, fmt.Errorf("daemonset: %w", err)
	}
	if opts.Workers <= 0 {
		opts.Workers = DefaultWorkers
	}
	if opts.BurstReplicas <= 0 {
		opts.BurstReplicas = DefaultBurstReplicas
	}
	if opts.MaxInFlightWrites <= 0 {
		opts.MaxInFlightWrites = DefaultMaxInFlightWrites
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	rec, err := mgr.EventRecorderFor(ServiceAccount, EventSource)
	if err != nil {
		return nil, nil, fmt.Errorf("daemonset: %w", err)
	}
	r := &reconciler{
		log:      mgr.Logger().With("controller", ControllerName),
		dsInf:    manager.InformerFor[*appsv1.DaemonSet](mgr, dsGVR, true),
		podInf:   manager.InformerFor[*corev1.Pod](mgr, podGVR, true),
		nodeInf:  manager.InformerFor[*corev1.Node](mgr, nodeGVR, false),
		crInf:    manager.InformerFor[*appsv1.ControllerRevision](mgr, crGVR, true),
		dss:      rest.For[*appsv1.DaemonSet, *appsv1.DaemonSetList](api, dsGVR, true),
		pods:     rest.For[*corev1.Pod, *corev1.PodList](api, podGVR, true),
		crs:      rest.For[*appsv1.ControllerRevision, *appsv1.ControllerRevisionList](api, crGVR, true),
		exp:      expectations.NewUIDTracking(opts.Clock),
		recorder: rec,
		clock:    opts.Clock,
		burst:    opts.BurstReplicas,
		writes:   make(chan struct{}, opts.MaxInFlightWrites),
		backoff:  newBackoff(opts.Clock, failedPodsBackoffInitial, failedPodsBackoffMax),
	}
	if err := controllerref.AddControllerUIDIndex(r.podInf.Indexer()); err != nil {
		return nil, nil, fmt.Errorf("daemonset: %w", err)
	}
	if r.history, err = history.New(r.crInf.Indexer(), r.crs); err != nil {
		return nil, nil, fmt.Errorf("daemonset: %w", err)
	}
	copts := mgr.ControllerOptions()
	copts.MaxConcurrentReconciles = opts.Workers
	c, err := controller.New(ControllerName, r, copts)
	if err != nil {
		return nil, nil, fmt.Errorf("daemonset: %w", err)
	}
	r.later = newTimers(opts.Clock, c.Queue())
	for _, src := range []controller.Source{
		controller.Kind(r.dsInf, "apps/v1 daemonsets", handler.Object[*appsv1.DaemonSet]()),
		controller.Informer(r.podInf, "v1 pods", func(q handler.Queue) informer.Handler[*corev1.Pod] { return &podHandler{r: r, q: q} }),
		controller.Informer(r.nodeInf, "v1 nodes", func(q handler.Queue) informer.Handler[*corev1.Node] { return &nodeHandler{r: r, q: q} }),
		controller.Kind(r.crInf, crsTyped, r.daemonSetsOfRevision),
	} {
		if err := c.Watch(src); err != nil {
			return nil, nil, fmt.Errorf("daemonset: %w", err)
		}
	}
	return c, r, nil
}

// acquireWrite waits for a write slot (or ctx's end) and returns its
// release.
func (r *reconciler) acquireWrite(ctx context.Context) (release func(), err error) {
	select {
	case r.writes <- struct{}{}:
		return func() { <-r.writes }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func request(ns, name string) reconcile.Request {
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}
}

func keyOf(ds *appsv1.DaemonSet) string { return ds.Namespace + "/" + ds.Name }

func podKey(p *corev1.Pod) string { return p.Namespace + "/" + p.Name }
