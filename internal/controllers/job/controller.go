package job

import (
	"fmt"
	"log/slog"

	batchv1 "k8s.io/api/batch/v1"
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

// Kubernetes' defaults and names.
const (
	// DefaultWorkers is the number of Jobs synced concurrently
	// (--concurrent-job-syncs).
	DefaultWorkers = 5
	// MaxUncountedPods bounds the UIDs in status.uncountedTerminatedPods
	// (and so the finalizers removed) per sync.
	MaxUncountedPods = 500
	// MaxPodCreateDeletePerSync bounds the creates or deletes of one sync.
	MaxPodCreateDeletePerSync = 500
	// ControllerName names the controller (queue, metrics, logs).
	ControllerName = "job"
	// EventSource is the component of the Events the controller records.
	EventSource = "job-controller"
	// ManagedBy is the spec.managedBy value of Jobs this controller owns
	// (as is an unset field).
	ManagedBy = "kubernetes.io/job-controller"
)

var (
	jobGVR             = batchv1.SchemeGroupVersion.WithResource("jobs")
	podGVR             = corev1.SchemeGroupVersion.WithResource("pods")
	jobGVK             = batchv1.SchemeGroupVersion.WithKind("Job")
	completionIndexEnv = "JOB_COMPLETION_INDEX"
)

// Options tune the controller; the zero value means Kubernetes' defaults.
type Options struct {
	// Workers is the number of concurrent syncs (default DefaultWorkers).
	Workers int
	// Clock tells start, finish and back-off times and active deadlines;
	// default the real clock. Requeue delays run on the manager's clock.
	Clock clock.PassiveClock
}

// reconciler holds what every sync shares; fields never change after
// newReconciler, and informer objects are never modified.
type reconciler struct {
	log    *slog.Logger
	jobInf *informer.Informer[*batchv1.Job]
	podInf *informer.Informer[*corev1.Pod]
	jobs   *rest.Resource[*batchv1.Job, *batchv1.JobList]
	pods   *rest.Resource[*corev1.Pod, *corev1.PodList]
	// exp counts pod creates and deletes issued but not yet observed.
	exp *expectations.UIDTracking
	// finalizers holds, per Job key, the UIDs of pods whose tracking
	// finalizer the controller removed but the informer still shows.
	finalizers *finalizerExpectations
	// written holds the Job versions this controller's status writes
	// replaced, until the Job informer moves past them.
	written  *statusWrites
	backoff  *backoffStore
	recorder record.Recorder
	clock    clock.PassiveClock
	metrics  *metrics
}

// ServiceAccount is the controller's identity: kube-controller-manager's
// ServiceAccount for it in kube-system (see manager.ClientFor).
const ServiceAccount = "job-controller"

// Add registers the Job controller on mgr: the Job sync and the cleanup of
// tracking finalizers on orphaned pods, both under leader election.
func Add(mgr *manager.Manager, opts Options) error {
	ctrl, orphans, _, err := newControllers(mgr, opts)
	if err != nil {
		return err
	}
	if err := mgr.Add(ctrl); err != nil {
		return fmt.Errorf("job: %w", err)
	}
	if err := mgr.Add(orphans); err != nil {
		return fmt.Errorf("job: %w", err)
	}
	return nil
}

// newControllers builds the Job controller and the orphan-pod controller.
func newControllers(mgr *manager.Manager, opts Options) (*controller.Controller, *controller.Controller, *reconciler, error) {
	c, err := mgr.ClientFor(ServiceAccount)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("job: %w", err)
	}
	if opts.Workers <= 0 {
		opts.Workers = DefaultWorkers
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	rec, err := mgr.EventRecorderFor(ServiceAccount, EventSource)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("job: %w", err)
	}
	met, err := newMetrics(mgr.Registry())
	if err != nil {
		return nil, nil, nil, err
	}
	r := &reconciler{
		log:        mgr.Logger().With("controller", ControllerName),
		jobInf:     manager.InformerFor[*batchv1.Job](mgr, jobGVR, true),
		podInf:     manager.InformerFor[*corev1.Pod](mgr, podGVR, true),
		jobs:       rest.For[*batchv1.Job, *batchv1.JobList](c, jobGVR, true),
		pods:       rest.For[*corev1.Pod, *corev1.PodList](c, podGVR, true),
		exp:        expectations.NewUIDTracking(opts.Clock),
		finalizers: newFinalizerExpectations(),
		written:    newStatusWrites(),
		backoff:    newBackoffStore(),
		recorder:   rec,
		clock:      opts.Clock,
		metrics:    met,
	}
	if err := controllerref.AddControllerUIDIndex(r.podInf.Indexer()); err != nil {
		return nil, nil, nil, fmt.Errorf("job: %w", err)
	}
	copts := mgr.ControllerOptions()
	copts.MaxConcurrentReconciles = opts.Workers
	ctrl, err := controller.New(ControllerName, r, copts)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("job: %w", err)
	}
	for _, src := range []controller.Source{
		controller.Kind(r.jobInf, "batch/v1 jobs", handler.Object[*batchv1.Job]()),
		podSource(r),
	} {
		if err := ctrl.Watch(src); err != nil {
			return nil, nil, nil, fmt.Errorf("job: %w", err)
		}
	}
	ocopts := mgr.ControllerOptions()
	orphans, err := controller.New(ControllerName+"-orphan-pods", &orphanReconciler{r: r}, ocopts)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("job: %w", err)
	}
	if err := orphans.Watch(controller.Kind(r.podInf, "v1 pods", r.orphanCandidates)); err != nil {
		return nil, nil, nil, fmt.Errorf("job: %w", err)
	}
	return ctrl, orphans, r, nil
}
