package endpoints

import (
	"fmt"
	"log/slog"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/setpoint-dev/setpoint/controller"
	"github.com/setpoint-dev/setpoint/handler"
	"github.com/setpoint-dev/setpoint/informer"
	"github.com/setpoint-dev/setpoint/internal/controllers/endpointutil"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/predicate"
	"github.com/setpoint-dev/setpoint/reconcile"
	"github.com/setpoint-dev/setpoint/record"
	"github.com/setpoint-dev/setpoint/rest"
)

// Kubernetes' names and limits.
const (
	// ControllerName names the controller (queue, metrics, logs).
	ControllerName = "endpoint"
	// EventSource is the component of the controller's Events.
	EventSource = "endpoint-controller"
	// DefaultWorkers is --concurrent-endpoint-syncs' default.
	DefaultWorkers = 5
	// MaxCapacity is the most addresses one Endpoints object lists.
	MaxCapacity = 1000
	// Truncated is the value of the over-capacity annotation.
	Truncated = "truncated"
	// leaderAnnotation marks the Endpoints of old leader elections, which
	// have no Service and must stay.
	leaderAnnotation = "control-plane.alpha.kubernetes.io/leader"
)

var (
	svcGVR = corev1.SchemeGroupVersion.WithResource("services")
	podGVR = corev1.SchemeGroupVersion.WithResource("pods")
	epGVR  = corev1.SchemeGroupVersion.WithResource("endpoints")
)

// Options tune the controller; the zero value means Kubernetes' defaults.
type Options struct {
	// Workers is the number of Services synced at once (default 5).
	Workers int
}

type reconciler struct {
	log      *slog.Logger
	svcInf   *informer.Informer[*corev1.Service]
	podInf   *informer.Informer[*corev1.Pod]
	epInf    *informer.Informer[*corev1.Endpoints]
	eps      *rest.Resource[*corev1.Endpoints, *corev1.EndpointsList]
	recorder record.Recorder
	triggers *endpointutil.TriggerTimes
	stale    *staleTracker
}

// ServiceAccount is the controller's identity: kube-controller-manager's
// ServiceAccount for it in kube-system (see manager.ClientFor).
const ServiceAccount = "endpoint-controller"

// Add registers the controller on mgr; it runs while mgr leads.
func Add(mgr *manager.Manager, opts Options) error {
	_, err := newController(mgr, opts)
	return err
}

func newController(mgr *manager.Manager, opts Options) (*reconciler, error) {
	c, err := mgr.ClientFor(ServiceAccount)
	if err != nil {
		return nil, fmt.Errorf("endpoints: %w", err)
	}
	if opts.Workers <= 0 {
		opts.Workers = DefaultWorkers
	}
	rec, err := mgr.EventRecorderFor(ServiceAccount, EventSource)
	if err != nil {
		return nil, fmt.Errorf("endpoints: %w", err)
	}
	r := &reconciler{
		log:      mgr.Logger().With("controller", ControllerName),
		svcInf:   manager.InformerFor[*corev1.Service](mgr, svcGVR, true),
		podInf:   manager.InformerFor[*corev1.Pod](mgr, podGVR, true),
		epInf:    manager.InformerFor[*corev1.Endpoints](mgr, epGVR, true),
		eps:      rest.For[*corev1.Endpoints, *corev1.EndpointsList](c, epGVR, true),
		recorder: rec,
		triggers: endpointutil.NewTriggerTimes(),
		stale:    newStaleTracker(),
	}
	copts := mgr.ControllerOptions()
	copts.MaxConcurrentReconciles = opts.Workers
	ctrl, err := controller.New(ControllerName, r, copts)
	if err != nil {
		return nil, fmt.Errorf("endpoints: %w", err)
	}
	// Endpoints: the initial list (leftovers of deleted Services) and
	// deletions; a user's edit waits for the next change or resync, as in
	// Kubernetes.
	epEvents := predicate.Funcs{
		CreateFunc: func(e predicate.CreateEvent) bool {
			_, leader := e.Object.GetAnnotations()[leaderAnnotation]
			return e.IsInInitialList && !leader
		},
		UpdateFunc: func(predicate.UpdateEvent) bool { return false },
	}
	for _, src := range []controller.Source{
		controller.Kind(r.svcInf, "v1 services", handler.Object[*corev1.Service]()),
		controller.Informer(r.podInf, "v1 pods", func(q handler.Queue) informer.Handler[*corev1.Pod] {
			return &endpointutil.PodHandler{Services: r.svcInf, Queue: q}
		}),
		controller.Kind(r.epInf, "v1 endpoints", handler.Object[*corev1.Endpoints](), epEvents),
	} {
		if err := ctrl.Watch(src); err != nil {
			return nil, fmt.Errorf("endpoints: %w", err)
		}
	}
	if err := mgr.Add(ctrl); err != nil {
		return nil, fmt.Errorf("endpoints: %w", err)
	}
	return r, nil
}

func keyOf(obj metav1.Object) types.NamespacedName {
	return types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}
}

var _ reconcile.Reconciler = (*reconciler)(nil)
