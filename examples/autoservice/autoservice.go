package autoservice

import (
	"fmt"
	"log/slog"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/setpoint-dev/setpoint/builder"
	"github.com/setpoint-dev/setpoint/client"
	"github.com/setpoint-dev/setpoint/controller"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/predicate"
	"github.com/setpoint-dev/setpoint/record"
)

// Defaults of Options.
const (
	DefaultName    = "auto-service"
	DefaultWorkers = 2
)

// Options configure the controller Add registers. The zero value selects
// the defaults.
type Options struct {
	// Name names the controller in logs, metrics and its workqueue, and is
	// the source component of its Events (default "auto-service"). It must
	// be unique within the manager.
	Name string
	// MaxConcurrentReconciles is the number of workers (default 2, the
	// seed's); never two for the same Deployment at once.
	MaxConcurrentReconciles int
}

// Reconciler keeps the Service of each Deployment as its annotation asks.
// Build one with NewReconciler; its fields are fixed after that and it is
// safe for concurrent use by the controller's workers.
type Reconciler struct {
	// client reads Deployments and Services from the manager's caches
	// (deep copies) and writes Services to the API server.
	client client.Client
	// scheme gives the Deployment's kind for owner references.
	scheme   *runtime.Scheme
	recorder record.Recorder
	log      *slog.Logger
}

// New returns a Reconciler on c (the manager's client, or a fake one in
// unit tests), recording events with recorder.
func New(c client.Client, recorder record.Recorder, log *slog.Logger) *Reconciler {
	return &Reconciler{client: c, scheme: c.Scheme(), recorder: recorder, log: log}
}

// NewReconciler builds the Reconciler on mgr's client (whose reads start
// the manager's Deployment and Service informers) and an event recorder
// named opts.Name.
func NewReconciler(mgr *manager.Manager, opts Options) (*Reconciler, error) {
	opts.setDefaults()
	rec, err := mgr.GetEventRecorderFor(opts.Name)
	if err != nil {
		return nil, fmt.Errorf("autoservice: %w", err)
	}
	return New(mgr.GetClient(), rec, mgr.Logger().With("controller", opts.Name)), nil
}

// Add registers the auto-service controller with mgr: it reconciles
// Deployments (For) and the Services they control (Owns), so that a
// change to either, or the deletion of the Service, brings the
// Deployment's key to the queue. Deployment updates that change neither
// the generation (spec) nor the annotations are filtered out, and so are
// resyncs of both kinds: nothing this controller reads changes there.
func Add(mgr *manager.Manager, opts Options) error {
	opts.setDefaults()
	r, err := NewReconciler(mgr, opts)
	if err != nil {
		return err
	}
	err = builder.ControllerManagedBy(mgr).
		Named(opts.Name).
		For(builder.Kind[*appsv1.Deployment](), predicate.Or(predicate.GenerationChanged(), predicate.AnnotationChanged())).
		Owns(builder.Kind[*corev1.Service](), predicate.ResourceVersionChanged()).
		WithOptions(controller.Options{MaxConcurrentReconciles: opts.MaxConcurrentReconciles}).
		Complete(r)
	if err != nil {
		return fmt.Errorf("autoservice: %w", err)
	}
	return nil
}

func (o *Options) setDefaults() {
	if o.Name == "" {
		o.Name = DefaultName
	}
	if o.MaxConcurrentReconciles <= 0 {
		o.MaxConcurrentReconciles = DefaultWorkers
	}
}
