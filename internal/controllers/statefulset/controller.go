package statefulset

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/setpoint-dev/setpoint/controller"
	"github.com/setpoint-dev/setpoint/handler"
	"github.com/setpoint-dev/setpoint/informer"
	"github.com/setpoint-dev/setpoint/internal/controllers/controllerref"
	"github.com/setpoint-dev/setpoint/internal/controllers/history"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/record"
	"github.com/setpoint-dev/setpoint/rest"
)

const (
	// DefaultWorkers is kube-controller-manager's --concurrent-statefulset-syncs.
	DefaultWorkers = 5
	// ControllerName names the controller (queue, metrics, logs).
	ControllerName = "statefulset"
	// EventSource is the component of the Events the controller records.
	EventSource = "statefulset-controller"
	// DefaultMaxInFlightWrites bounds the pod and claim creates and deletes
	// in flight at once, across all syncs (as the ReplicaSet controller's:
	// a Parallel slow-start batch of 256 creates would otherwise pass the
	// API server's limit of concurrent mutating requests and be answered
	// 429; Kubernetes' controller manager is held back by its client's QPS
	// limit instead).
	DefaultMaxInFlightWrites = 48
)

var (
	setGVR = appsv1.SchemeGroupVersion.WithResource("statefulsets")
	podGVR = corev1.SchemeGroupVersion.WithResource("pods")
	pvcGVR = corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims")
	revGVR = appsv1.SchemeGroupVersion.WithResource("controllerrevisions")
	setGVK = appsv1.SchemeGroupVersion.WithKind("StatefulSet")
	podGVK = corev1.SchemeGroupVersion.WithKind("Pod")
)

// Options tune the controller; the zero value means Kubernetes' defaults.
type Options struct {
	// Workers is the number of concurrent syncs (default DefaultWorkers).
	Workers int
	// Clock tells availability (minReadySeconds) and expectation expiry;
	// default the real clock. The workqueue keeps the manager's clock.
	Clock clock.PassiveClock
	// MaxInFlightWrites bounds concurrent pod and claim creates and
	// deletes (default DefaultMaxInFlightWrites).
	MaxInFlightWrites int
}

// reconciler holds what every sync shares; its fields are set once. The
// informers' objects are shared and never modified.
type reconciler struct {
	log      *slog.Logger
	setInf   *informer.Informer[*appsv1.StatefulSet]
	podInf   *informer.Informer[*corev1.Pod]
	pvcInf   *informer.Informer[*corev1.PersistentVolumeClaim]
	sets     *rest.Resource[*appsv1.StatefulSet, *appsv1.StatefulSetList]
	pods     *rest.Resource[*corev1.Pod, *corev1.PodList]
	pvcs     *rest.Resource[*corev1.PersistentVolumeClaim, *corev1.PersistentVolumeClaimList]
	history  *history.History
	exp      *expectations
	recorder record.Recorder
	clock    clock.PassiveClock
	metrics  *metrics

	// writes holds a token per pod or claim write in flight.
	writes chan struct{}

	// rvMu guards setRVs: per set key, the resourceVersion of our last
	// status write.
	rvMu   sync.Mutex
	setRVs map[string]string
}

// ServiceAccount is the controller's identity: kube-controller-manager's
// ServiceAccount for it in kube-system (see manager.ClientFor).
const ServiceAccount = "statefulset-controller"

// Add registers the StatefulSet controller on mgr.
func Add(mgr *manager.Manager, opts Options) error {
	ctrl, _, err := newController(mgr, opts)
	if err != nil {
		return err
	}
	return mgr.Add(ctrl)
}

// newController builds the controller and its sources without adding it.
func newController(mgr *manager.Manager, opts Options) (*controller.Controller, *reconciler, error) {
	c, err := mgr.ClientFor(ServiceAccount)
	if err != nil {
		return nil, nil, fmt.Errorf("statefulset: %w", err)
	}
	if opts.Workers <= 0 {
		opts.Workers = DefaultWorkers
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.MaxInFlightWrites <= 0 {
		opts.MaxInFlightWrites = DefaultMaxInFlightWrites
	}
	rec, err := mgr.EventRecorderFor(ServiceAccount, EventSource)
	if err != nil {
		return nil, nil, fmt.Errorf("statefulset: %w", err)
	}
	m, err := newMetrics(mgr.Registry())
	if err != nil {
		return nil, nil, err
	}
	r := &reconciler{
		log:      mgr.Logger().With("controller", ControllerName),
		setInf:   manager.InformerFor[*appsv1.StatefulSet](mgr, setGVR, true),
		podInf:   manager.InformerFor[*corev1.Pod](mgr, podGVR, true),
		pvcInf:   manager.InformerFor[*corev1.PersistentVolumeClaim](mgr, pvcGVR, true),
		sets:     rest.For[*appsv1.StatefulSet, *appsv1.StatefulSetList](c, setGVR, true),
		pods:     rest.For[*corev1.Pod, *corev1.PodList](c, podGVR, true),
		pvcs:     rest.For[*corev1.PersistentVolumeClaim, *corev1.PersistentVolumeClaimList](c, pvcGVR, true),
		exp:      newExpectations(opts.Clock),
		recorder: rec,
		clock:    opts.Clock,
		metrics:  m,
		setRVs:   map[string]string{},
		writes:   make(chan struct{}, opts.MaxInFlightWrites),
	}
	revInf := manager.InformerFor[*appsv1.ControllerRevision](mgr, revGVR, true)
	r.history, err = history.New(revInf.Indexer(), rest.For[*appsv1.ControllerRevision, *appsv1.ControllerRevisionList](c, revGVR, true))
	if err != nil {
		return nil, nil, fmt.Errorf("statefulset: %w", err)
	}
	if err := controllerref.AddControllerUIDIndex(r.podInf.Indexer()); err != nil {
		return nil, nil, fmt.Errorf("statefulset: %w", err)
	}
	copts := mgr.ControllerOptions()
	copts.MaxConcurrentReconciles = opts.Workers
	ctrl, err := controller.New(ControllerName, r, copts)
	if err != nil {
		return nil, nil, fmt.Errorf("statefulset: %w", err)
	}
	for _, src := range []controller.Source{
		controller.Kind(r.setInf, "apps/v1 statefulsets", handler.Object[*appsv1.StatefulSet]()),
		newPodSource(r),
		newClaimSource(r),
		controller.Kind(revInf, "apps/v1 controllerrevisions", ownerRequest[*appsv1.ControllerRevision]),
	} {
		if err := ctrl.Watch(src); err != nil {
			return nil, nil, fmt.Errorf("statefulset: %w", err)
		}
	}
	return ctrl, r, nil
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
