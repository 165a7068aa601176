package podautoscaler

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	"k8s.io/utils/clock"

	"github.com/setpoint-dev/setpoint/builder"
	"github.com/setpoint-dev/setpoint/informer"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/predicate"
	"github.com/setpoint-dev/setpoint/reconcile"
	"github.com/setpoint-dev/setpoint/record"
	"github.com/setpoint-dev/setpoint/rest"
)

// kube-controller-manager's defaults (--horizontal-pod-autoscaler-*).
const (
	// DefaultSyncPeriod is how often each autoscaler is synced.
	DefaultSyncPeriod = 15 * time.Second
	// DefaultTolerance is the usage ratio band around 1 that changes
	// nothing.
	DefaultTolerance = 0.1
	// DefaultDownscaleStabilization is the scale-down stabilization window
	// of autoscalers without a behavior (and of a behavior's scaleDown
	// that names none).
	DefaultDownscaleStabilization = 5 * time.Minute
	// DefaultCPUInitializationPeriod is how long after its start a pod's
	// cpu counts only once it is ready and its sample began after.
	DefaultCPUInitializationPeriod = 5 * time.Minute
	// DefaultInitialReadinessDelay is how long after its start a pod
	// turning ready is taken as still starting.
	DefaultInitialReadinessDelay = 30 * time.Second
	// DefaultWorkers is --concurrent-horizontal-pod-autoscaler-syncs.
	DefaultWorkers = 5
	// ControllerName names the controller (queue, metrics, logs).
	ControllerName = "horizontal-pod-autoscaler"
	// EventSource is the component of the Events the controller records.
	EventSource = "horizontal-pod-autoscaler"
)

var (
	hpaGVR        = autoscalingv2.SchemeGroupVersion.WithResource("horizontalpodautoscalers")
	podGVR        = corev1.SchemeGroupVersion.WithResource("pods")
	podMetricsGVR = metricsv1beta1.SchemeGroupVersion.WithResource("pods")
)

// Options tune the controller; the zero value means Kubernetes' defaults.
type Options struct {
	Workers                 int
	SyncPeriod              time.Duration
	Tolerance               float64
	DownscaleStabilization  time.Duration
	CPUInitializationPeriod time.Duration
	InitialReadinessDelay   time.Duration
	// Clock tells the time of recommendations, scale events and pod
	// readiness, and drives the sync period; default the manager's.
	Clock clock.WithTicker
}

func (o *Options) setDefaults(mgrClock clock.WithTicker) {
	if o.Workers <= 0 {
		o.Workers = DefaultWorkers
	}
	if o.SyncPeriod <= 0 {
		o.SyncPeriod = DefaultSyncPeriod
	}
	if o.Tolerance <= 0 {
		o.Tolerance = DefaultTolerance
	}
	if o.DownscaleStabilization <= 0 {
		o.DownscaleStabilization = DefaultDownscaleStabilization
	}
	if o.CPUInitializationPeriod <= 0 {
		o.CPUInitializationPeriod = DefaultCPUInitializationPeriod
	}
	if o.InitialReadinessDelay <= 0 {
		o.InitialReadinessDelay = DefaultInitialReadinessDelay
	}
	if o.Clock == nil {
		o.Clock = mgrClock
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
}

type reconciler struct {
	log        *slog.Logger
	opts       Options
	hpaInf     *informer.Informer[*autoscalingv2.HorizontalPodAutoscaler]
	podInf     *informer.Informer[*corev1.Pod]
	hpas       *rest.Resource[*autoscalingv2.HorizontalPodAutoscaler, *autoscalingv2.HorizontalPodAutoscalerList]
	podMetrics *rest.Resource[*metricsv1beta1.PodMetrics, *metricsv1beta1.PodMetricsList]
	scales     *scaleClient
	recorder   record.Recorder
	metrics    *metrics

	// mu guards memories and selectors.
	mu sync.Mutex
	// memories are the autoscalers' recommendations and scale events.
	memories map[types.NamespacedName]*memory
	// selectors are the autoscalers' last target selectors, to tell
	// autoscalers whose pods overlap (AmbiguousSelector).
	selectors map[types.NamespacedName]labels.Selector
}

// ServiceAccount is the controller's identity: kube-controller-manager's
// ServiceAccount for it in kube-system (see manager.ClientFor).
const ServiceAccount = "horizontal-pod-autoscaler"

// Add registers the horizontal pod autoscaler controller on mgr.
func Add(mgr *manager.Manager, opts Options) error {
	c, err := mgr.ClientFor(ServiceAccount)
	if err != nil {
		return fmt.Errorf("podautoscaler: %w", err)
	}
	copts := mgr.ControllerOptions()
	opts.setDefaults(copts.Clock)
	rec, err := mgr.EventRecorderFor(ServiceAccount, EventSource)
	if err != nil {
		return fmt.Errorf("podautoscaler: %w", err)
	}
	m, err := newMetrics(mgr.Registry())
	if err != nil {
		return fmt.Errorf("podautoscaler: %w", err)
	}
	r := &reconciler{
		log:        mgr.Logger().With("controller", ControllerName),
		opts:       opts,
		hpaInf:     manager.InformerFor[*autoscalingv2.HorizontalPodAutoscaler](mgr, hpaGVR, true),
		podInf:     manager.InformerFor[*corev1.Pod](mgr, podGVR, true),
		hpas:       rest.For[*autoscalingv2.HorizontalPodAutoscaler, *autoscalingv2.HorizontalPodAutoscalerList](c, hpaGVR, true),
		podMetrics: rest.For[*metricsv1beta1.PodMetrics, *metricsv1beta1.PodMetricsList](c, podMetricsGVR, true),
		scales:     newScaleClient(c),
		recorder:   rec,
		metrics:    m,
		memories:   map[types.NamespacedName]*memory{},
		selectors:  map[types.NamespacedName]labels.Selector{},
	}
	copts.MaxConcurrentReconciles = opts.Workers
	copts.Clock = opts.Clock
	// A status write of the controller's own does not sync again at once:
	// only creation, deletion and spec changes (a new generation) do; the
	// sync period does the rest, as kube-controller-manager queues them.
	err = builder.ControllerManagedBy(mgr).Named(ControllerName).
		For(builder.KindAt[*autoscalingv2.HorizontalPodAutoscaler](hpaGVR, true), predicate.GenerationChanged()).
		WithOptions(copts).
		Complete(r)
	if err != nil {
		return fmt.Errorf("podautoscaler controller: %w", err)
	}
	return nil
}

// Reconcile syncs one autoscaler and asks to be called again after the
// sync period.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	hpa, err := r.hpaInf.Lister().Namespace(req.Namespace).Get(req.Name)
	if apierrors.IsNotFound(err) {
		r.forget(req.NamespacedName)
		return reconcile.Result{}, nil
	}
	if err != nil {
		return reconcile.Result{}, err
	}
	start := time.Now()
	action, err := r.sync(ctx, hpa.DeepCopy())
	r.metrics.observeReconcile(action, err, time.Since(start))
	if err != nil {
		r.log.Error("sync failed", "hpa", req.String(), "err", err)
	}
	// Errors wait for the next period too, as kube-controller-manager
	// requeues every autoscaler at the sync period whatever happened.
	return reconcile.Result{RequeueAfter: r.opts.SyncPeriod}, nil
}

// memoryOf returns the autoscaler's history, created on first use.
func (r *reconciler) memoryOf(key types.NamespacedName) *memory {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.memories[key]
	if m == nil {
		m = &memory{}
		r.memories[key] = m
	}
	return m
}

// forget drops what is remembered of a deleted autoscaler.
func (r *reconciler) forget(key types.NamespacedName) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.memories, key)
	delete(r.selectors, key)
	r.metrics.forget(key)
}
