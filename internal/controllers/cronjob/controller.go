package cronjob

import (
	"fmt"
	"log/slog"
	"sync/atomic"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/utils/clock"

	"github.com/setpoint-dev/setpoint/controller"
	"github.com/setpoint-dev/setpoint/handler"
	"github.com/setpoint-dev/setpoint/informer"
	"github.com/setpoint-dev/setpoint/internal/controllers/controllerref"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/record"
	"github.com/setpoint-dev/setpoint/rest"
)

// Kubernetes' defaults and names.
const (
	// DefaultWorkers is kube-controller-manager's --concurrent-cron-job-syncs.
	DefaultWorkers = 5
	// ControllerName names the controller (queue, metrics, logs).
	ControllerName = "cronjob"
	// EventSource is the component of the Events the controller records.
	EventSource = "cronjob-controller"
)

var (
	cronJobGVR = batchv1.SchemeGroupVersion.WithResource("cronjobs")
	jobGVR     = batchv1.SchemeGroupVersion.WithResource("jobs")
	cronJobGVK = batchv1.SchemeGroupVersion.WithKind("CronJob")
)

// Options tune the controller; the zero value means Kubernetes' defaults.
type Options struct {
	// Workers is the number of CronJobs synced concurrently (default
	// DefaultWorkers).
	Workers int
	// Clock tells the time schedules are compared with and drives the
	// requeue at the next schedule time (the workqueue's delays); default
	// the manager's clock.
	Clock clock.WithTicker
}

// reconciler holds what every sync shares; its fields never change after
// newController. Objects from the informers are shared: never modified.
type reconciler struct {
	log      *slog.Logger
	cjInf    *informer.Informer[*batchv1.CronJob]
	jobInf   *informer.Informer[*batchv1.Job]
	cronJobs *rest.Resource[*batchv1.CronJob, *batchv1.CronJobList]
	jobs     *rest.Resource[*batchv1.Job, *batchv1.JobList]
	recorder record.Recorder
	clock    clock.PassiveClock
	metrics  *metrics
	// syncing counts the syncs in progress (tests wait for it to drain
	// before they move the clock).
	syncing atomic.Int32
}

// ServiceAccount is the controller's identity: kube-controller-manager's
// ServiceAccount for it in kube-system (see manager.ClientFor).
const ServiceAccount = "cronjob-controller"

// Add registers the CronJob controller on mgr (it runs while mgr leads).
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
		return nil, nil, fmt.Errorf("cronjob: %w", err)
	}
	if opts.Workers <= 0 {
		opts.Workers = DefaultWorkers
	}
	copts := mgr.ControllerOptions()
	if opts.Clock == nil {
		opts.Clock = copts.Clock
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	rec, err := mgr.EventRecorderFor(ServiceAccount, EventSource)
	if err != nil {
		return nil, nil, fmt.Errorf("cronjob: %w", err)
	}
	m, err := newMetrics(mgr.Registry())
	if err != nil {
		return nil, nil, fmt.Errorf("cronjob: %w", err)
	}
	r := &reconciler{
		log:      mgr.Logger().With("controller", ControllerName),
		cjInf:    manager.InformerFor[*batchv1.CronJob](mgr, cronJobGVR, true),
		jobInf:   manager.InformerFor[*batchv1.Job](mgr, jobGVR, true),
		cronJobs: rest.For[*batchv1.CronJob, *batchv1.CronJobList](c, cronJobGVR, true),
		jobs:     rest.For[*batchv1.Job, *batchv1.JobList](c, jobGVR, true),
		recorder: rec,
		clock:    opts.Clock,
		metrics:  m,
	}
	if err := controllerref.AddControllerUIDIndex(r.jobInf.Indexer()); err != nil {
		return nil, nil, fmt.Errorf("cronjob: %w", err)
	}
	copts.MaxConcurrentReconciles = opts.Workers
	copts.Clock = opts.Clock
	ctrl, err := controller.New(ControllerName, r, copts)
	if err != nil {
		return nil, nil, fmt.Errorf("cronjob: %w", err)
	}
	for _, src := range []controller.Source{
		controller.Kind(r.cjInf, "batch/v1 cronjobs", handler.Object[*batchv1.CronJob]()),
		controller.Kind(r.jobInf, "batch/v1 jobs", handler.ControllerOwner[*batchv1.Job](cronJobGVK.GroupKind(), true)),
	} {
		if err := ctrl.Watch(src); err != nil {
			return nil, nil, fmt.Errorf("cronjob: %w", err)
		}
	}
	return ctrl, r, nil
}
