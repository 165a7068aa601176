package statemachine

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"k8s.io/utils/clock"

	"github.com/setpoint-dev/setpoint/builder"
	"github.com/setpoint-dev/setpoint/client"
	"github.com/setpoint-dev/setpoint/controller"
	dbv1 "github.com/setpoint-dev/setpoint/examples/statemachine/api/v1"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/record"
)

// Defaults of Options.
const (
	DefaultName           = "database-state-machine"
	DefaultWorkers        = 2
	DefaultProvisionTime  = 2 * time.Second
	DefaultUpdateTime     = time.Second
	DefaultTeardownTime   = time.Second
	DefaultRetryBaseDelay = time.Second
	DefaultRetryMaxDelay  = time.Minute
)

// Finalizer is the finalizer the controller puts on every Database and
// removes once the simulated teardown is over.
const Finalizer = "demo.setpoint.dev/teardown"

// Options configure the controller. The zero value selects the defaults;
// negative durations are refused.
type Options struct {
	// Name names the controller in logs and metrics and is the source
	// component of its Events (default "database-state-machine"); unique
	// within the manager.
	Name string
	// MaxConcurrentReconciles is the number of workers (default 2); one
	// Database is never reconciled by two at once.
	MaxConcurrentReconciles int
	// ProvisionTime, UpdateTime and TeardownTime are how long the
	// simulated provisioning, update and teardown take (defaults 2s, 1s,
	// 1s), measured on the manager's clock from status.phaseTransitionTime.
	ProvisionTime, UpdateTime, TeardownTime time.Duration
	// RetryBaseDelay and RetryMaxDelay shape the wait in Failed before
	// retry n (n = status.retries ≥ 1): RetryBaseDelay·2^(n-1), at most
	// RetryMaxDelay (defaults 1s and 1m).
	RetryBaseDelay, RetryMaxDelay time.Duration
}

func (o *Options) setDefaults() error {
	for _, d := range []*time.Duration{&o.ProvisionTime, &o.UpdateTime, &o.TeardownTime, &o.RetryBaseDelay, &o.RetryMaxDelay} {
		if *d < 0 {
			return fmt.Errorf("statemachine: negative duration %s in Options", *d)
		}
	}
	if o.Name == "" {
		o.Name = DefaultName
	}
	if o.MaxConcurrentReconciles <= 0 {
		o.MaxConcurrentReconciles = DefaultWorkers
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&o.ProvisionTime, DefaultProvisionTime)
	def(&o.UpdateTime, DefaultUpdateTime)
	def(&o.TeardownTime, DefaultTeardownTime)
	def(&o.RetryBaseDelay, DefaultRetryBaseDelay)
	def(&o.RetryMaxDelay, DefaultRetryMaxDelay)
	if o.RetryMaxDelay < o.RetryBaseDelay {
		return fmt.Errorf("statemachine: RetryMaxDelay %s is below RetryBaseDelay %s", o.RetryMaxDelay, o.RetryBaseDelay)
	}
	return nil
}

// retryDelay is the wait in Failed before retry n (n ≥ 1).
func (o *Options) retryDelay(n int32) time.Duration {
	d := o.RetryBaseDelay
	for i := int32(1); i < n && d < o.RetryMaxDelay; i++ {
		d *= 2
	}
	return min(d, o.RetryMaxDelay)
}

// Reconciler drives each Database through its phases. Build one with
// NewReconciler; its fields are fixed afterwards and it is safe for
// concurrent use by the controller's workers.
type Reconciler struct {
	// reader reads Databases from the API server (not the cache: every
	// decision is taken on the latest state); client writes them.
	reader   client.Reader
	client   client.Client
	clock    clock.PassiveClock
	recorder record.Recorder
	log      *slog.Logger
	opts     Options
}

// New returns a Reconciler that reads with reader and writes with c (the
// manager's API reader and client, or one fake client in unit tests).
func New(c client.Client, reader client.Reader, clk clock.PassiveClock, recorder record.Recorder, log *slog.Logger, opts Options) (*Reconciler, error) {
	if err := opts.setDefaults(); err != nil {
		return nil, err
	}
	return &Reconciler{reader: reader, client: c, clock: clk, recorder: recorder, log: log, opts: opts}, nil
}

// NewReconciler builds the Reconciler over mgr's client and API reader,
// clock (manager.Options.Clock) and an event recorder named opts.Name.
// mgr's scheme must know Database (dbv1.AddToScheme) and the API server
// must serve databases.demo.setpoint.dev (see InstallCRD).
func NewReconciler(mgr *manager.Manager, opts Options) (*Reconciler, error) {
	if err := opts.setDefaults(); err != nil {
		return nil, err
	}
	if _, err := mgr.KindFor(&dbv1.Database{}); err != nil {
		return nil, fmt.Errorf("statemachine: the manager's scheme does not know Database; register it with v1.AddToScheme: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := mgr.MappingFor(ctx, &dbv1.Database{}); err != nil {
		return nil, fmt.Errorf("statemachine: is the CRD %s installed and established? %w", CRDName, err)
	}
	rec, err := mgr.GetEventRecorderFor(opts.Name)
	if err != nil {
		return nil, fmt.Errorf("statemachine: %w", err)
	}
	return New(mgr.GetClient(), mgr.GetAPIReader(), mgr.ControllerOptions().Clock, rec,
		mgr.Logger().With("controller", opts.Name), opts)
}

// Add registers the controller with mgr. It reconciles Databases on every
// event of one, status writes included: each reconcile takes at most one
// step, and the watch event of that step's write brings the Database back
// for the next. Waits (an operation in progress, a retry's backoff) are
// RequeueAfter on the manager's clock, never sleeps.
func Add(mgr *manager.Manager, opts Options) error {
	if err := opts.setDefaults(); err != nil {
		return err
	}
	r, err := NewReconciler(mgr, opts)
	if err != nil {
		return err
	}
	err = builder.ControllerManagedBy(mgr).
		Named(opts.Name).
		For(builder.Kind[*dbv1.Database]()).
		WithOptions(controller.Options{MaxConcurrentReconciles: opts.MaxConcurrentReconciles}).
		Complete(r)
	if err != nil {
		return fmt.Errorf("statemachine: %w", err)
	}
	return nil
}
