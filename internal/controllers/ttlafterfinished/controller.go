package ttlafterfinished

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"

	"github.com/setpoint-dev/setpoint/controller"
	"github.com/setpoint-dev/setpoint/handler"
	"github.com/setpoint-dev/setpoint/informer"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/reconcile"
	"github.com/setpoint-dev/setpoint/rest"
)

const (
	// DefaultWorkers is --concurrent-ttl-after-finished-syncs' default.
	DefaultWorkers = 5
	// ControllerName names the controller (queue, metrics, logs).
	ControllerName = "ttlafterfinished"
)

var jobGVR = batchv1.SchemeGroupVersion.WithResource("jobs")

// Options tune the controller; the zero value means Kubernetes' defaults.
type Options struct {
	// Workers is the number of concurrent syncs (default DefaultWorkers).
	Workers int
	// Clock tells expiry; default the real clock. Requeue delays run on
	// the manager's clock.
	Clock clock.PassiveClock
}

type reconciler struct {
	log      *slog.Logger
	jobInf   *informer.Informer[*batchv1.Job]
	jobs     *rest.Resource[*batchv1.Job, *batchv1.JobList]
	clock    clock.PassiveClock
	duration prometheus.Observer
}

// ServiceAccount is the controller's identity: kube-controller-manager's
// ServiceAccount for it in kube-system (see manager.ClientFor).
const ServiceAccount = "ttl-after-finished-controller"

// Add registers the TTL-after-finished controller on mgr.
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
		return nil, nil, fmt.Errorf("ttlafterfinished: %w", err)
	}
	if opts.Workers <= 0 {
		opts.Workers = DefaultWorkers
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	hist := prometheus.NewHistogram(prometheus.HistogramOpts{
		Subsystem: "ttl_after_finished_controller", Name: "job_deletion_duration_seconds",
		Help:    "The time it took to delete the job since it became eligible for deletion",
		Buckets: prometheus.ExponentialBuckets(0.1, 2, 14),
	})
	if err := mgr.Registry().Register(hist); err != nil {
		var are prometheus.AlreadyRegisteredError
		if !errors.As(err, &are) {
			return nil, nil, fmt.Errorf("ttlafterfinished: register metrics: %w", err)
		}
		hist = are.ExistingCollector.(prometheus.Histogram)
	}
	r := &reconciler{
		log:      mgr.Logger().With("controller", ControllerName),
		jobInf:   manager.InformerFor[*batchv1.Job](mgr, jobGVR, true),
		jobs:     rest.For[*batchv1.Job, *batchv1.JobList](c, jobGVR, true),
		clock:    opts.Clock,
		duration: hist,
	}
	copts := mgr.ControllerOptions()
	copts.MaxConcurrentReconciles = opts.Workers
	ctrl, err := controller.New(ControllerName, r, copts)
	if err != nil {
		return nil, nil, fmt.Errorf("ttlafterfinished: %w", err)
	}
	if err := ctrl.Watch(controller.Kind(r.jobInf, "batch/v1 jobs", r.needsCleanup)); err != nil {
		return nil, nil, fmt.Errorf("ttlafterfinished: %w", err)
	}
	return ctrl, r, nil
}

// needsCleanup maps a Job event to a request when the Job has a TTL and
// has finished.
func (r *reconciler) needsCleanup(job *batchv1.Job) []reconcile.Request {
	if !needsCleanup(job) {
		return nil
	}
	return handler.Object[*batchv1.Job]()(job)
}

// Reconcile implements reconcile.Reconciler: delete the Job if its TTL
// has run out, else come back when it does.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	job, err := r.jobInf.Lister().Namespace(req.Namespace).Get(req.Name)
	if apierrors.IsNotFound(err) {
		return reconcile.Result{}, nil
	}
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("get job %s from cache: %w", req, err)
	}
	if wait, err := r.timeLeft(job); err != nil || wait > 0 {
		return reconcile.Result{RequeueAfter: wait}, err
	}
	// The cache may be stale (TTL changed, Job recreated): decide on the
	// live object.
	fresh, err := r.jobs.Namespace(req.Namespace).Get(ctx, req.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return reconcile.Result{}, nil
	}
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("get job %s: %w", req, err)
	}
	wait, err := r.timeLeft(fresh)
	if err != nil || wait > 0 {
		return reconcile.Result{RequeueAfter: wait}, err
	}
	if !needsCleanup(fresh) {
		return reconcile.Result{}, nil
	}
	policy := metav1.DeletePropagationForeground
	uid := fresh.UID
	r.log.Info("cleaning up finished job", "job", req.String())
	err = r.jobs.Namespace(req.Namespace).Delete(ctx, req.Name, metav1.DeleteOptions{
		PropagationPolicy: &policy, Preconditions: &metav1.Preconditions{UID: &uid}})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return reconcile.Result{}, fmt.Errorf("delete job %s: %w", req, err)
	}
	if err == nil {
		if expireAt, e := expiry(fresh); e == nil && expireAt != nil {
			r.duration.Observe(r.clock.Since(*expireAt).Seconds())
		}
	}
	return reconcile.Result{}, nil
}

// timeLeft returns how long until job expires; 0 when it has expired or
// does not need cleanup.
func (r *reconciler) timeLeft(job *batchv1.Job) (time.Duration, error) {
	if !needsCleanup(job) {
		return 0, nil
	}
	at, err := expiry(job)
	if err != nil || at == nil {
		return 0, err
	}
	if left := at.Sub(r.clock.Now()); left > 0 {
		return left, nil
	}
	return 0, nil
}

// needsCleanup reports a Job with a TTL that has finished and is not
// being deleted.
func needsCleanup(job *batchv1.Job) bool {
	return job.Spec.TTLSecondsAfterFinished != nil && job.DeletionTimestamp == nil && finishTime(job) != nil
}

// finishTime returns the lastTransitionTime of the Job's true Complete or
// Failed condition, or nil.
func finishTime(job *batchv1.Job) *metav1.Time {
	for i := range job.Status.Conditions {
		c := &job.Status.Conditions[i]
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return &c.LastTransitionTime
		}
	}
	return nil
}

// expiry returns finish time + TTL.
func expiry(job *batchv1.Job) (*time.Time, error) {
	ft := finishTime(job)
	if ft == nil || job.Spec.TTLSecondsAfterFinished == nil {
		return nil, nil
	}
	if ft.IsZero() {
		return nil, reconcile.TerminalError(fmt.Errorf("job %s/%s: unable to find the time when the Job finished", job.Namespace, job.Name))
	}
	at := ft.Add(time.Duration(*job.Spec.TTLSecondsAfterFinished) * time.Second)
	return &at, nil
}
