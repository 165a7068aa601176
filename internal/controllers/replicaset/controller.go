package replicaset

import (
	"fmt"
	"log/slog"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/setpoint-dev/setpoint/controller"
	"github.com/setpoint-dev/setpoint/handler"
	"github.com/setpoint-dev/setpoint/informer"
	"github.com/setpoint-dev/setpoint/internal/controllers/controllerref"
	"github.com/setpoint-dev/setpoint/internal/controllers/expectations"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/record"
	"github.com/setpoint-dev/setpoint/rest"
)

// Kubernetes' defaults.
const (
	// DefaultWorkers is the number of ReplicaSets synced concurrently.
	DefaultWorkers = 5
	// DefaultBurstReplicas bounds the creates or deletes of one sync.
	DefaultBurstReplicas = 500
	// ControllerName names the controller (queue, metrics, logs).
	ControllerName = "replicaset"
	// EventSource is the component of the Events the controller records.
	EventSource = "replicaset-controller"
)

var (
	rsGVR     = appsv1.SchemeGroupVersion.WithResource("replicasets")
	podGVR    = corev1.SchemeGroupVersion.WithResource("pods")
	rsGVK     = appsv1.SchemeGroupVersion.WithKind("ReplicaSet")
	rsGroupVK = rsGVK.GroupKind()
)

// Options tune the controller; the zero value means Kubernetes' defaults.
type Options struct {
	// Workers is the number of concurrent syncs (default DefaultWorkers).
	Workers int
	// BurstReplicas bounds creates or deletes per sync (default
	// DefaultBurstReplicas).
	BurstReplicas int
	// Clock tells availability time (minReadySeconds) and expectation
	// expiry; default the real clock. The workqueue keeps the manager's
	// clock.
	Clock clock.PassiveClock
}

// reconciler holds what every sync shares. Its fields are set by newReconciler
// and never change; the informers' objects are shared and never modified.
type reconciler struct {
	log    *slog.Logger
	rsInf  *informer.Informer[*appsv1.ReplicaSet]
	podInf *informer.Informer[*corev1.Pod]
	rss    *rest.Resource[*appsv1.ReplicaSet, *appsv1.ReplicaSetList]
	pods   *rest.Resource[*corev1.Pod, *corev1.PodList]
	// exp counts the creates and deletes issued but not yet observed, per
	// ReplicaSet key; deletions by pod key.
	exp      *expectations.UIDTracking
	recorder record.Recorder
	clock    clock.PassiveClock
	burst    int
}

// Add registers the ReplicaSet controller on mgr.
func Add(mgr *manager.Manager, opts Options) error {
	ctrl, _, err := newController(mgr, opts)
	if err != nil {
		return err
	}
	return mgr.Add(ctrl)
}

// newController builds the controller and its sources without adding it.
func newController(mgr *manager.Manager, opts Options) (*controller.Controller, *reconciler, error) {
	if opts.Workers <= 0 {
		opts.Workers = DefaultWorkers
	}
	if opts.BurstReplicas <= 0 {
		opts.BurstReplicas = DefaultBurstReplicas
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	rec, err := mgr.GetEventRecorderFor(EventSource)
	if err != nil {
		return nil, nil, fmt.Errorf("replicaset: %w", err)
	}
	r := &reconciler{
		log:      mgr.Logger().With("controller", ControllerName),
		rsInf:    manager.InformerFor[*appsv1.ReplicaSet](mgr, rsGVR, true),
		podInf:   manager.InformerFor[*corev1.Pod](mgr, podGVR, true),
		rss:      rest.For[*appsv1.ReplicaSet, *appsv1.ReplicaSetList](mgr.Client(), rsGVR, true),
		pods:     rest.For[*corev1.Pod, *corev1.PodList](mgr.Client(), podGVR, true),
		exp:      expectations.NewUIDTracking(opts.Clock),
		recorder: rec,
		clock:    opts.Clock,
		burst:    opts.BurstReplicas,
	}
	if err := controllerref.AddControllerUIDIndex(r.podInf.Indexer()); err != nil {
		return nil, nil, fmt.Errorf("replicaset: %w", err)
	}
	copts := mgr.ControllerOptions()
	copts.MaxConcurrentReconciles = opts.Workers
	ctrl, err := controller.New(ControllerName, r, copts)
	if err != nil {
		return nil, nil, fmt.Errorf("replicaset: %w", err)
	}
	if err := ctrl.Watch(controller.Kind(r.rsInf, "apps/v1 replicasets", handler.Object[*appsv1.ReplicaSet]())); err != nil {
		return nil, nil, fmt.Errorf("replicaset: %w", err)
	}
	if err := ctrl.Watch(&podSource{r: r}); err != nil {
		return nil, nil, fmt.Errorf("replicaset: %w", err)
	}
	return ctrl, r, nil
}
