package replicaset

import (
	"context"
	"fmt"
	"log/slog"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/clock"

	"github.com/setpoint-dev/setpoint/controller"
	"github.com/setpoint-dev/setpoint/informer"
	"github.com/setpoint-dev/setpoint/internal/controllers/controllerref"
	"github.com/setpoint-dev/setpoint/internal/controllers/expectations"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/record"
	"github.com/setpoint-dev/setpoint/rest"
	"github.com/setpoint-dev/setpoint/sharding"
)

// Kubernetes' defaults.
const (
	// DefaultWorkers is the number of ReplicaSets synced concurrently.
	DefaultWorkers = 5
	// DefaultBurstReplicas bounds the creates or deletes of one sync.
	DefaultBurstReplicas = 500
	// DefaultMaxInFlightWrites bounds the pod creates and deletes the
	// controller has in flight at once, across all its syncs. Kubernetes'
	// controller manager is held back by its client's QPS limit instead;
	// without one, a slow-start batch of 256 parallel creates would, with
	// the scheduler's and the nodes' writes, pass the API server's 200
	// concurrent mutating requests and be answered 429 (retry after 1 s).
	DefaultMaxInFlightWrites = 48
	// ControllerName names the controller (queue, metrics, logs).
	ControllerName = "replicaset"
	// EventSource is the component of the Events the controller records.
	EventSource = "replicaset-controller"
	// ServiceAccount is the controller's identity in kube-system.
	ServiceAccount = "replicaset-controller"
)

var (
	rsGVR  = appsv1.SchemeGroupVersion.WithResource("replicasets")
	podGVR = corev1.SchemeGroupVersion.WithResource("pods")
	rsGVK  = appsv1.SchemeGroupVersion.WithKind("ReplicaSet")
)

// Options tune the controller; the zero value means Kubernetes' defaults.
type Options struct {
	// Workers is the number of concurrent syncs (default DefaultWorkers).
	Workers int
	// BurstReplicas bounds creates or deletes per sync (default
	// DefaultBurstReplicas).
	BurstReplicas int
	// MaxInFlightWrites bounds concurrent pod creates and deletes (default
	// DefaultMaxInFlightWrites). A slow-start batch is still one batch:
	// its calls only queue for a slot.
	MaxInFlightWrites int
	// Clock tells availability time (minReadySeconds) and expectation
	// expiry; default the real clock. The workqueue keeps the manager's
	// clock.
	Clock clock.PassiveClock
	// Sharder, if set, runs the controller sharded (by namespace): on
	// every replica, not only the leader, reconciling only the ReplicaSets
	// of the shards this replica owns (see package sharding). The caller
	// adds the Sharder to the manager.
	Sharder *sharding.Sharder
}

// reconciler holds what every sync shares. Its fields are set by newReconciler
// and never change; the informers' objects are shared and never modified.
type reconciler struct {
	log *slog.Logger
	// owner is the kind kept (ReplicaSets, or another kind seen as them).
	owner  Owner
	gvk    schema.GroupVersionKind
	podInf *informer.Informer[*corev1.Pod]
	pods   *rest.Resource[*corev1.Pod, *corev1.PodList]
	// exp counts the creates and deletes issued but not yet observed, per
	// ReplicaSet key; deletions by pod key.
	exp      *expectations.UIDTracking
	recorder record.Recorder
	clock    clock.PassiveClock
	burst    int
	// writes holds a token per pod create or delete in flight; its
	// capacity is Options.MaxInFlightWrites.
	writes chan struct{}
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

// Add registers the ReplicaSet controller on mgr.
func Add(mgr *manager.Manager, opts Options) error {
	return AddKind(mgr, opts, ReplicaSetKind)
}

// AddKind registers on mgr a controller of this package for kind.
func AddKind(mgr *manager.Manager, opts Options, kind Kind) error {
	ctrl, _, err := newController(mgr, opts, kind)
	if err != nil {
		return err
	}
	if opts.Sharder != nil {
		return mgr.Add(sharding.EveryReplica(ctrl))
	}
	return mgr.Add(ctrl)
}

// newController builds the controller and its sources without adding it.
func newController(mgr *manager.Manager, opts Options, kind Kind) (*controller.Controller, *reconciler, error) {
	if opts.Workers <= 0 {
		opts.Workers = DefaultWorkers
	}
	if opts.BurstReplicas <= 0 {
		opts.BurstReplicas = DefaultBurstReplicas
	}
	if opts.MaxInFlightWrites <= 0 {
		opts.MaxInFlightWrites = DefaultMaxInFlightWrites
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	c, err := mgr.ClientFor(kind.ServiceAccount)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", kind.Name, err)
	}
	rec, err := mgr.EventRecorderFor(kind.ServiceAccount, kind.EventSource)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", kind.Name, err)
	}
	owner, err := kind.New(mgr, c)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", kind.Name, err)
	}
	r := &reconciler{
		log:      mgr.Logger().With("controller", kind.Name),
		owner:    owner,
		gvk:      owner.GVK(),
		podInf:   manager.InformerFor[*corev1.Pod](mgr, podGVR, true),
		pods:     rest.For[*corev1.Pod, *corev1.PodList](c, podGVR, true),
		exp:      expectations.NewUIDTracking(opts.Clock),
		recorder: rec,
		clock:    opts.Clock,
		burst:    opts.BurstReplicas,
		writes:   make(chan struct{}, opts.MaxInFlightWrites),
	}
	if err := controllerref.AddControllerUIDIndex(r.podInf.Indexer()); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", kind.Name, err)
	}
	copts := mgr.ControllerOptions()
	copts.MaxConcurrentReconciles = opts.Workers
	ctrl, err := sharding.NewController(opts.Sharder, kind.Name, r, copts, owner.CachedRequests(),
		owner.Source(), podSource(r))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", kind.Name, err)
	}
	return ctrl, r, nil
}
