package deployment

import (
	"context"
	"fmt"
	"log/slog"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/setpoint-dev/setpoint/controller"
	"github.com/setpoint-dev/setpoint/handler"
	"github.com/setpoint-dev/setpoint/informer"
	"github.com/setpoint-dev/setpoint/internal/controllers/controllerref"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/predicate"
	"github.com/setpoint-dev/setpoint/reconcile"
	"github.com/setpoint-dev/setpoint/record"
	"github.com/setpoint-dev/setpoint/rest"
	"github.com/setpoint-dev/setpoint/sharding"
)

// Kubernetes' defaults and names.
const (
	// DefaultWorkers is the number of Deployments synced concurrently.
	DefaultWorkers = 5
	// ControllerName names the controller (queue, metrics, logs).
	ControllerName = "deployment"
	// EventSource is the component of the Events the controller records.
	EventSource = "deployment-controller"
)

var (
	deployGVR = appsv1.SchemeGroupVersion.WithResource("deployments")
	rsGVR     = appsv1.SchemeGroupVersion.WithResource("replicasets")
	podGVR    = corev1.SchemeGroupVersion.WithResource("pods")
	deployGVK = appsv1.SchemeGroupVersion.WithKind("Deployment")
)

// Options tune the controller; the zero value means Kubernetes' defaults.
type Options struct {
	// Workers is the number of concurrent syncs (default DefaultWorkers).
	Workers int
	// Clock stamps conditions, judges progressDeadlineSeconds and fires the
	// progress re-check of a stuck rollout; default the real clock. The
	// workqueue keeps the manager's clock.
	Clock clock.WithDelayedExecution
	// Sharder, if set, runs the controller sharded (by namespace): on
	// every replica, not only the leader, reconciling only the Deployments
	// of the shards this replica owns (see package sharding). The caller
	// adds the Sharder to the manager.
	Sharder *sharding.Sharder
}

// reconciler holds what every sync shares. Its fields are set by
// newController and never change; informer objects are shared and never
// modified (every write starts from a deep copy).
type reconciler struct {
	log      *slog.Logger
	dInf     *informer.Informer[*appsv1.Deployment]
	rsInf    *informer.Informer[*appsv1.ReplicaSet]
	podInf   *informer.Informer[*corev1.Pod]
	deploys  *rest.Resource[*appsv1.Deployment, *appsv1.DeploymentList]
	rss      *rest.Resource[*appsv1.ReplicaSet, *appsv1.ReplicaSetList]
	recorder record.Recorder
	clock    clock.WithDelayedExecution
	// checks holds the pending progress-deadline re-checks, one per
	// Deployment.
	checks *deadlines
}

// ServiceAccount is the controller's identity: kube-controller-manager's
// ServiceAccount for it in kube-system (see manager.ClientFor).
const ServiceAccount = "deployment-controller"

// Add registers the Deployment controller on mgr: one controller runnable
// (it runs only while the manager leads) over the manager's shared
// Deployment, ReplicaSet and pod informers.
func Add(mgr *manager.Manager, opts Options) error {
	c, r, err := newController(mgr, opts)
	if err != nil {
		return err
	}
	return mgr.Add(&runnable{c: c, checks: r.checks, everyReplica: opts.Sharder != nil})
}

// runnable runs the controller and, when it stops, drops the pending
// progress re-checks.
type runnable struct {
	c      *controller.Controller
	checks *deadlines
	// everyReplica is set when sharded: the controller runs on every
	// replica, not only the leader.
	everyReplica bool
}

// Start implements manager.Runnable.
func (r *runnable) Start(ctx context.Context) error {
	defer r.checks.stopAll()
	return r.c.Start(ctx)
}

// NeedLeaderElection implements manager.LeaderElectionRunnable.
func (r *runnable) NeedLeaderElection() bool { return !r.everyReplica }

func newController(mgr *manager.Manager, opts Options) (*controller.Controller, *reconciler, error) {
	api, err := mgr.ClientFor(ServiceAccount)
	if err != nil {
		return nil, nil, fmt.Errorf("deployment: %w", err)
	}
	if opts.Workers <= 0 {
		opts.Workers = DefaultWorkers
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	rec, err := mgr.EventRecorderFor(ServiceAccount, EventSource)
	if err != nil {
		return nil, nil, fmt.Errorf("deployment: %w", err)
	}
	r := &reconciler{
		log:      mgr.Logger().With("controller", ControllerName),
		dInf:     manager.InformerFor[*appsv1.Deployment](mgr, deployGVR, true),
		rsInf:    manager.InformerFor[*appsv1.ReplicaSet](mgr, rsGVR, true),
		podInf:   manager.InformerFor[*corev1.Pod](mgr, podGVR, true),
		deploys:  rest.For[*appsv1.Deployment, *appsv1.DeploymentList](api, deployGVR, true),
		rss:      rest.For[*appsv1.ReplicaSet, *appsv1.ReplicaSetList](api, rsGVR, true),
		recorder: rec,
		clock:    opts.Clock,
	}
	if err := controllerref.AddControllerUIDIndex(r.rsInf.Indexer()); err != nil {
		return nil, nil, fmt.Errorf("deployment: %w", err)
	}
	if err := controllerref.AddControllerUIDIndex(r.podInf.Indexer()); err != nil {
		return nil, nil, fmt.Errorf("deployment: %w", err)
	}
	copts := mgr.ControllerOptions()
	copts.MaxConcurrentReconciles = opts.Workers
	onlyDeletes := predicate.Funcs{
		CreateFunc: func(predicate.CreateEvent) bool { return false },
		UpdateFunc: func(predicate.UpdateEvent) bool { return false },
	}
	c, err := sharding.NewController(opts.Sharder, ControllerName, r, copts, sharding.CachedRequests(r.dInf),
		controller.Kind(r.dInf, "apps/v1 deployments", handler.Object[*appsv1.Deployment]()),
		controller.Kind(r.rsInf, "apps/v1 replicasets", r.deploymentsOfReplicaSet),
		controller.Kind(r.podInf, "v1 pods", r.recreateDeploymentOfPod, onlyDeletes))
	if err != nil {
		return nil, nil, fmt.Errorf("deployment: %w", err)
	}
	r.checks = newDeadlines(opts.Clock, c.Queue())
	return c, r, nil
}

func request(ns, name string) reconcile.Request {
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}
}

// deploymentsOfReplicaSet maps a ReplicaSet to its controlling Deployment,
// or, for an orphan, to every Deployment of its namespace whose selector
// matches it (candidates for adoption). Updates map old and new objects, so
// a Deployment that lost a ReplicaSet hears of it too.
func (r *reconciler) deploymentsOfReplicaSet(rs *appsv1.ReplicaSet) []reconcile.Request {
	if ref := controllerOf(rs.OwnerReferences); ref != nil {
		if ref.Kind != deployGVK.Kind || !isAppsGroup(ref.APIVersion) {
			return nil
		}
		return []reconcile.Request{request(rs.Namespace, ref.Name)}
	}
	if rs.DeletionTimestamp != nil {
		return nil
	}
	ds, err := r.dInf.Lister().Namespace(rs.Namespace).List(labels.Everything())
	if err != nil {
		return nil
	}
	var out []reconcile.Request
	for _, d := range ds {
		sel, err := selectorOf(d)
		if err != nil || sel.Empty() || !sel.Matches(labels.Set(rs.Labels)) {
			continue
		}
		out = append(out, request(d.Namespace, d.Name))
	}
	return out
}

// recreateDeploymentOfPod maps a deleted pod to the Recreate Deployment
// owning its ReplicaSet: a Recreate rollout waits for the old pods to go.
func (r *reconciler) recreateDeploymentOfPod(pod *corev1.Pod) []reconcile.Request {
	ref := controllerOf(pod.OwnerReferences)
	if ref == nil || ref.Kind != "ReplicaSet" || !isAppsGroup(ref.APIVersion) {
		return nil
	}
	rs, err := r.rsInf.Lister().Namespace(pod.Namespace).Get(ref.Name)
	if err != nil || rs.UID != ref.UID {
		return nil
	}
	dref := controllerOf(rs.OwnerReferences)
	if dref == nil || dref.Kind != deployGVK.Kind {
		return nil
	}
	d, err := r.dInf.Lister().Namespace(pod.Namespace).Get(dref.Name)
	if err != nil || d.UID != dref.UID || d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
		return nil
	}
	return []reconcile.Request{request(d.Namespace, d.Name)}
}
