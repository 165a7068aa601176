package disruption

import (
	"fmt"
	"log/slog"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/setpoint-dev/setpoint/builder"
	"github.com/setpoint-dev/setpoint/cache"
	"github.com/setpoint-dev/setpoint/informer"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/predicate"
	"github.com/setpoint-dev/setpoint/reconcile"
	"github.com/setpoint-dev/setpoint/record"
	"github.com/setpoint-dev/setpoint/rest"
)

// Kubernetes' values.
const (
	// DefaultWorkers is the number of budgets synced at once.
	DefaultWorkers = 5
	// DefaultResyncPeriod is how often every budget is synced again.
	DefaultResyncPeriod = 30 * time.Second
	// DeletionTimeout is how long an evicted pod stays in disruptedPods
	// waiting for its deletion.
	DeletionTimeout = 2 * time.Minute
	// StalePodDisruptionTimeout is how long a DisruptionTarget condition
	// may stay on a pod that is not being deleted.
	StalePodDisruptionTimeout = 2 * time.Minute
	// ControllerName names the controller (queue, metrics, logs).
	ControllerName = "disruption"
	// EventSource is the component of the Events the controller records.
	EventSource = "controllermanager"
)

var (
	pdbGVR = policyv1.SchemeGroupVersion.WithResource("poddisruptionbudgets")
	podGVR = corev1.SchemeGroupVersion.WithResource("pods")
)

// Options tune the controller; the zero value means Kubernetes' defaults.
type Options struct {
	Workers      int
	ResyncPeriod time.Duration
	// Clock tells eviction and condition ages; default the real clock.
	Clock clock.PassiveClock
}

type reconciler struct {
	log      *slog.Logger
	client   *rest.Client
	pdbInf   *informer.Informer[*policyv1.PodDisruptionBudget]
	podInf   *informer.Informer[*corev1.Pod]
	pdbs     *rest.Resource[*policyv1.PodDisruptionBudget, *policyv1.PodDisruptionBudgetList]
	pods     *rest.Resource[*corev1.Pod, *corev1.PodList]
	recorder record.Recorder
	clock    clock.PassiveClock
	resync   time.Duration
	scales   *scaleReader
}

// ServiceAccount is the controller's identity: kube-controller-manager's
// ServiceAccount for it in kube-system (see manager.ClientFor).
const ServiceAccount = "disruption-controller"

// Add registers the disruption controller on mgr.
func Add(mgr *manager.Manager, opts Options) error {
	c, err := mgr.ClientFor(ServiceAccount)
	if err != nil {
		return fmt.Errorf("disruption: %w", err)
	}
	if opts.Workers <= 0 {
		opts.Workers = DefaultWorkers
	}
	if opts.ResyncPeriod <= 0 {
		opts.ResyncPeriod = DefaultResyncPeriod
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	rec, err := mgr.EventRecorderFor(ServiceAccount, EventSource)
	if err != nil {
		return fmt.Errorf("disruption: %w", err)
	}
	r := &reconciler{
		log:      mgr.Logger().With("controller", ControllerName),
		client:   c,
		pdbInf:   manager.InformerFor[*policyv1.PodDisruptionBudget](mgr, pdbGVR, true),
		podInf:   manager.InformerFor[*corev1.Pod](mgr, podGVR, true),
		pdbs:     rest.For[*policyv1.PodDisruptionBudget, *policyv1.PodDisruptionBudgetList](c, pdbGVR, true),
		pods:     rest.For[*corev1.Pod, *corev1.PodList](c, podGVR, true),
		recorder: rec,
		clock:    opts.Clock,
		resync:   opts.ResyncPeriod,
		scales:   newScaleReader(c),
	}
	copts := mgr.ControllerOptions()
	copts.MaxConcurrentReconciles = opts.Workers
	err = builder.ControllerManagedBy(mgr).Named(ControllerName).
		For(builder.KindAt[*policyv1.PodDisruptionBudget](pdbGVR, true)).
		Watches(builder.KindAt[*corev1.Pod](podGVR, true).Map(r.budgetsOf)).
		WithOptions(copts).
		Complete(r)
	if err != nil {
		return fmt.Errorf("disruption controller: %w", err)
	}
	stale := &staleReconciler{log: r.log, pods: r.pods, podInf: r.podInf, clock: opts.Clock}
	scopts := mgr.ControllerOptions()
	err = builder.ControllerManagedBy(mgr).Named(ControllerName+"-stale-pod").
		For(builder.KindAt[*corev1.Pod](podGVR, true), predicate.Typed(hasDisruptionTarget)).
		WithOptions(scopts).
		Complete(stale)
	if err != nil {
		return fmt.Errorf("disruption controller: %w", err)
	}
	return nil
}

// budgetsOf maps a pod to the budgets of its namespace that select it.
func (r *reconciler) budgetsOf(pod *corev1.Pod) []reconcile.Request {
	pdbs, err := r.pdbInf.Indexer().ByIndex(cache.NamespaceIndex, pod.Namespace)
	if err != nil {
		return nil
	}
	var out []reconcile.Request
	for _, pdb := range pdbs {
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err != nil || !sel.Matches(labels.Set(pod.Labels)) {
			continue
		}
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: pdb.Namespace, Name: pdb.Name}})
	}
	return out
}
