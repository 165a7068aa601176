package application

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/clock"

	"github.com/setpoint-dev/setpoint/builder"
	"github.com/setpoint-dev/setpoint/client"
	"github.com/setpoint-dev/setpoint/controller"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/predicate"
	"github.com/setpoint-dev/setpoint/record"
)

// Defaults of Options.
const (
	DefaultName    = "application-operator"
	DefaultWorkers = 2
)

// Options configure the controller Add registers. The zero value selects
// the defaults.
type Options struct {
	// Name names the controller in logs and metrics and is the source
	// component of its Events (default "application-operator").
	Name string
	// MaxConcurrentReconciles is the number of workers (default 2); never
	// two for the same Application at once.
	MaxConcurrentReconciles int
}

func (o *Options) setDefaults() {
	if o.Name == "" {
		o.Name = DefaultName
	}
	if o.MaxConcurrentReconciles <= 0 {
		o.MaxConcurrentReconciles = DefaultWorkers
	}
}

// Reconciler converges each Application to its Deployment, Service,
// record and status. Build one with NewReconciler (over a manager) or New
// (over any client, the fake one in unit tests); its fields are fixed
// after that and it is safe for concurrent use by the controller's
// workers.
type Reconciler struct {
	// client reads Applications and the objects the operator owns from
	// the manager's cache (deep copies) and writes them to the server.
	client client.Client
	// scheme knows Application (checked by NewReconciler), for owner
	// references.
	scheme   *runtime.Scheme
	recorder record.Recorder
	clock    clock.PassiveClock
	log      *slog.Logger
}

// New builds the Reconciler over c (whose scheme must hold Application),
// recording events with recorder and reading the time from clk.
func New(c client.Client, recorder record.Recorder, clk clock.PassiveClock, log *slog.Logger) *Reconciler {
	return &Reconciler{client: c, scheme: c.Scheme(), recorder: recorder, clock: clk, log: log}
}

// NewReconciler builds the Reconciler over mgr's client and an event
// recorder named opts.Name. The manager's scheme must hold Application
// (AddToScheme), and the server must serve it (the CRD established): both
// are checked here.
func NewReconciler(mgr *manager.Manager, opts Options) (*Reconciler, error) {
	opts.setDefaults()
	if _, err := mgr.KindFor(&Application{}); err != nil {
		return nil, fmt.Errorf("application: the manager's scheme lacks Application (pass a scheme with application.AddToScheme applied in manager.Options.Scheme): %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := mgr.MappingFor(ctx, &Application{}); err != nil {
		return nil, fmt.Errorf("application: is the CRD %s applied and established? %w", CRDName, err)
	}
	recorder, err := mgr.GetEventRecorderFor(opts.Name)
	if err != nil {
		return nil, fmt.Errorf("application: %w", err)
	}
	var clk clock.PassiveClock = clock.RealClock{}
	if c := mgr.ControllerOptions().Clock; c != nil {
		clk = c
	}
	return New(mgr.GetClient(), recorder, clk, mgr.Logger().With("controller", opts.Name)), nil
}

// Add registers the Application controller with mgr: it reconciles
// Applications (For) and the Deployments and Services they control
// (Owns), so a change to the Deployment's readiness, or a deleted or
// edited Service, brings the Application back to the queue. Updates of an
// Application that change neither its spec (generation), its metadata
// nor its deletion are dropped: its own status writes cost nothing.
func Add(mgr *manager.Manager, opts Options) error {
	opts.setDefaults()
	r, err := NewReconciler(mgr, opts)
	if err != nil {
		return err
	}
	err = builder.ControllerManagedBy(mgr).
		Named(opts.Name).
		For(builder.Kind[*Application](), predicate.Or(predicate.GenerationChanged(), metadataChanged())).
		Owns(builder.Kind[*appsv1.Deployment](), predicate.ResourceVersionChanged()).
		Owns(builder.Kind[*corev1.Service](), predicate.ResourceVersionChanged()).
		WithOptions(controller.Options{MaxConcurrentReconciles: opts.MaxConcurrentReconciles}).
		Complete(r)
	if err != nil {
		return fmt.Errorf("application: %w", err)
	}
	return nil
}
