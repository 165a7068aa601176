package namespace

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"

	"github.com/setpoint-dev/setpoint/controller"
	"github.com/setpoint-dev/setpoint/handler"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/predicate"
	"github.com/setpoint-dev/setpoint/reconcile"
	"github.com/setpoint-dev/setpoint/rest"
	"github.com/setpoint-dev/setpoint/workqueue"
)

// Kubernetes' defaults.
const (
	DefaultWorkers           = 10
	DefaultFinalizerEstimate = 15 * time.Second
	defaultRetryBase         = 5 * time.Millisecond
	defaultRetryMax          = 60 * time.Second
	// DefaultSyncPeriod is kube-controller-manager's
	// --namespace-sync-period: how often terminating namespaces are
	// looked at again whatever the events.
	DefaultSyncPeriod   = 5 * time.Minute
	maxFinalizeAttempts = 5
	controllerName      = "namespace"
)

// Options tune the controller. The zero value means Kubernetes' defaults.
type Options struct {
	// Workers is the number of namespaces processed at once (default 10).
	Workers int
	// FinalizerEstimate is how long objects held by finalizers are
	// expected to take to go; the namespace is looked at again after half
	// of it plus a second (default 15s, so 8.5s).
	FinalizerEstimate time.Duration
	// SyncPeriod is the resync period of the controller's namespace
	// handler (default DefaultSyncPeriod, 5 minutes).
	SyncPeriod time.Duration
}

func (o *Options) setDefaults() {
	if o.Workers <= 0 {
		o.Workers = DefaultWorkers
	}
	if o.FinalizerEstimate <= 0 {
		o.FinalizerEstimate = DefaultFinalizerEstimate
	}
	if o.SyncPeriod <= 0 {
		o.SyncPeriod = DefaultSyncPeriod
	}
}

// ServiceAccount is the controller's identity: kube-controller-manager's
// ServiceAccount for it in kube-system (see manager.ClientFor).
const ServiceAccount = "namespace-controller"

// Add registers the namespace controller on mgr: a controller over
// namespaces that have a deletionTimestamp.
func Add(mgr *manager.Manager, opts Options) error {
	c, err := mgr.ClientFor(ServiceAccount)
	if err != nil {
		return fmt.Errorf("namespace: %w", err)
	}
	opts.setDefaults()
	copts := mgr.ControllerOptions()
	copts.MaxConcurrentReconciles = opts.Workers
	copts.RateLimiter = workqueue.NewMaxOfRateLimiter(
		workqueue.NewExponentialRateLimiter[reconcile.Request](defaultRetryBase, defaultRetryMax),
		workqueue.NewBucketRateLimiter[reconcile.Request](10, 100, clockOf(copts.Clock)))
	r := newReconciler(c, opts, mgr.Logger(), clockOf(copts.Clock))
	ctrl, err := controller.New(controllerName, r, copts)
	if err != nil {
		return fmt.Errorf("namespace controller: %w", err)
	}
	inf, _, err := manager.Informer[*corev1.Namespace](mgr)
	if err != nil {
		return fmt.Errorf("namespace controller: %w", err)
	}
	// Terminating namespaces only, looked at again every SyncPeriod as
	// kube's controller registers its handler with its own resync.
	src, err := controller.WithResyncPeriod(controller.Kind(inf, "v1 namespaces", handler.Object[*corev1.Namespace](),
		predicate.Typed(func(ns *corev1.Namespace) bool { return ns.DeletionTimestamp != nil })), opts.SyncPeriod)
	if err != nil {
		return fmt.Errorf("namespace controller: %w", err)
	}
	if err := ctrl.Watch(src); err != nil {
		return fmt.Errorf("namespace controller: %w", err)
	}
	if err := mgr.Add(ctrl); err != nil {
		return fmt.Errorf("namespace controller: %w", err)
	}
	return nil
}

func clockOf(c clock.WithTicker) clock.WithTicker {
	if c == nil {
		return clock.RealClock{}
	}
	return c
}

// reconciler empties a terminating namespace and then releases it.
type reconciler struct {
	c          *rest.Client
	namespaces *rest.Resource[*corev1.Namespace, *corev1.NamespaceList]
	opts       Options
	log        *slog.Logger
	clock      clock.PassiveClock
}

func newReconciler(c *rest.Client, opts Options, log *slog.Logger, clk clock.PassiveClock) *reconciler {
	return &reconciler{c: c, opts: opts, log: log.With("controller", controllerName), clock: clk,
		namespaces: rest.For[*corev1.Namespace, *corev1.NamespaceList](c, corev1.SchemeGroupVersion.WithResource("namespaces"), false)}
}

// Reconcile implements reconcile.Reconciler. It reads the namespace live;
// if it is terminating and still holds the "kubernetes" finalizer, it
// deletes all its content, records the deletion conditions, and once
// nothing is left removes the finalizer through namespaces/finalize (the
// API server then deletes the namespace). While content remains it asks
// to be called again after the estimated time.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	ns, err := r.namespaces.Get(ctx, req.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return reconcile.Result{}, nil
	}
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("get namespace %s: %w", req.Name, err)
	}
	if ns.DeletionTimestamp == nil || !slices.Contains(ns.Spec.Finalizers, corev1.FinalizerKubernetes) {
		return reconcile.Result{}, nil
	}
	ns, estimate, err := r.deleteAllContent(ctx, ns)
	if err != nil {
		return reconcile.Result{}, err
	}
	if estimate > 0 {
		r.log.Debug("namespace content remains", "namespace", ns.Name, "estimate", estimate)
		return reconcile.Result{RequeueAfter: estimate/2 + time.Second}, nil
	}
	return reconcile.Result{}, r.finalize(ctx, ns)
}

// finalize removes the "kubernetes" finalizer through the finalize
// subresource, re-reading the namespace on conflicts.
func (r *reconciler) finalize(ctx context.Context, ns *corev1.Namespace) error {
	for attempt := 1; ; attempt++ {
		cp := ns.DeepCopy()
		cp.Spec.Finalizers = slices.DeleteFunc(cp.Spec.Finalizers, func(f corev1.FinalizerName) bool { return f == corev1.FinalizerKubernetes })
		_, err := r.namespaces.UpdateSubresource(ctx, cp, "finalize", metav1.UpdateOptions{})
		switch {
		case err == nil, apierrors.IsNotFound(err):
			r.log.Info("namespace finalized", "namespace", ns.Name)
			return nil
		case !apierrors.IsConflict(err) || attempt >= maxFinalizeAttempts:
			return fmt.Errorf("finalize namespace %s: %w", ns.Name, err)
		}
		if ns, err = r.namespaces.Get(ctx, ns.Name, metav1.GetOptions{}); err != nil {
			if apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("get namespace %s: %w", ns.Name, err)
		}
	}
}
