package endpointslice

import (
	"fmt"
	"log/slog"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/setpoint-dev/setpoint/controller"
	"github.com/setpoint-dev/setpoint/handler"
	"github.com/setpoint-dev/setpoint/informer"
	"github.com/setpoint-dev/setpoint/internal/controllers/endpointutil"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/reconcile"
	"github.com/setpoint-dev/setpoint/record"
	"github.com/setpoint-dev/setpoint/rest"
)

// Kubernetes' names and defaults.
const (
	// ControllerName names the controller (queue, metrics, logs).
	ControllerName = "endpointslice"
	// ManagedBy is the endpointslice.kubernetes.io/managed-by value of the
	// slices this controller owns.
	ManagedBy = "endpointslice-controller.k8s.io"
	// EventSource is the component of the controller's Events.
	EventSource = "endpoint-slice-controller"
	// DefaultWorkers is --concurrent-service-endpoint-syncs' default.
	DefaultWorkers = 5
	// DefaultMaxEndpointsPerSlice is --max-endpoints-per-slice's default.
	DefaultMaxEndpointsPerSlice = 100
)

var (
	svcGVR   = corev1.SchemeGroupVersion.WithResource("services")
	podGVR   = corev1.SchemeGroupVersion.WithResource("pods")
	nodeGVR  = corev1.SchemeGroupVersion.WithResource("nodes")
	sliceGVR = discoveryv1.SchemeGroupVersion.WithResource("endpointslices")
)

// Options tune the controller; the zero value means Kubernetes' defaults.
type Options struct {
	// Workers is the number of Services synced at once (default 5).
	Workers int
	// MaxEndpointsPerSlice bounds the endpoints of one slice (default 100).
	MaxEndpointsPerSlice int
}

type reconciler struct {
	log      *slog.Logger
	max      int
	svcInf   *informer.Informer[*corev1.Service]
	podInf   *informer.Informer[*corev1.Pod]
	nodeInf  *informer.Informer[*corev1.Node]
	sliceInf *informer.Informer[*discoveryv1.EndpointSlice]
	slices   *rest.Resource[*discoveryv1.EndpointSlice, *discoveryv1.EndpointSliceList]
	recorder record.Recorder
	triggers *endpointutil.TriggerTimes
	tracker  *tracker
}

// ServiceAccount is the controller's identity: kube-controller-manager's
// ServiceAccount for it in kube-system (see manager.ClientFor).
const ServiceAccount = "endpointslice-controller"

// Add registers the controller on mgr; it runs while mgr leads.
func Add(mgr *manager.Manager, opts Options) error {
	_, err := newController(mgr, opts)
	return err
}

func newController(mgr *manager.Manager, opts Options) (*reconciler, error) {
	c, err := mgr.ClientFor(ServiceAccount)
	if err != nil {
		return nil, fmt.Errorf("endpointslice: %w", err)
	}
	if opts.Workers <= 0 {
		opts.Workers = DefaultWorkers
	}
	if opts.MaxEndpointsPerSlice <= 0 {
		opts.MaxEndpointsPerSlice = DefaultMaxEndpointsPerSlice
	}
	rec, err := mgr.EventRecorderFor(ServiceAccount, EventSource)
	if err != nil {
		return nil, fmt.Errorf("endpointslice: %w", err)
	}
	r := &reconciler{
		log:      mgr.Logger().With("controller", ControllerName),
		max:      opts.MaxEndpointsPerSlice,
		svcInf:   manager.InformerFor[*corev1.Service](mgr, svcGVR, true),
		podInf:   manager.InformerFor[*corev1.Pod](mgr, podGVR, true),
		nodeInf:  manager.InformerFor[*corev1.Node](mgr, nodeGVR, false),
		sliceInf: manager.InformerFor[*discoveryv1.EndpointSlice](mgr, sliceGVR, true),
		slices:   rest.For[*discoveryv1.EndpointSlice, *discoveryv1.EndpointSliceList](c, sliceGVR, true),
		recorder: rec,
		triggers: endpointutil.NewTriggerTimes(),
		tracker:  newTracker(),
	}
	if err := addServiceIndex(r.sliceInf); err != nil {
		return nil, fmt.Errorf("endpointslice: %w", err)
	}
	copts := mgr.ControllerOptions()
	copts.MaxConcurrentReconciles = opts.Workers
	ctrl, err := controller.New(ControllerName, r, copts)
	if err != nil {
		return nil, fmt.Errorf("endpointslice: %w", err)
	}
	for _, src := range []controller.Source{
		controller.Kind(r.svcInf, "v1 services", handler.Object[*corev1.Service]()),
		controller.Informer(r.podInf, "v1 pods", func(q handler.Queue) informer.Handler[*corev1.Pod] {
			return &endpointutil.PodHandler{Services: r.svcInf, Queue: q}
		}),
		controller.Informer(r.sliceInf, "discovery.k8s.io/v1 endpointslices", func(q handler.Queue) informer.Handler[*discoveryv1.EndpointSlice] { return &sliceHandler{r: r, q: q} }),
		// Node informer: zones are read at sync time.
		controller.Kind(r.nodeInf, "v1 nodes", func(*corev1.Node) []reconcile.Request { return nil }),
	} {
		if err := ctrl.Watch(src); err != nil {
			return nil, fmt.Errorf("endpointslice: %w", err)
		}
	}
	if err := mgr.Add(ctrl); err != nil {
		return nil, fmt.Errorf("endpointslice: %w", err)
	}
	return r, nil
}

// sliceHandler maps events of slices this controller manages to their
// Service, and feeds the tracker.
type sliceHandler struct {
	r *reconciler
	q handler.Queue
}

func managedService(s *discoveryv1.EndpointSlice) (types.NamespacedName, bool) {
	if s.Labels[discoveryv1.LabelManagedBy] != ManagedBy {
		return types.NamespacedName{}, false
	}
	name, ok := s.Labels[discoveryv1.LabelServiceName]
	return types.NamespacedName{Namespace: s.Namespace, Name: name}, ok && name != ""
}

func (h *sliceHandler) OnAdd(s *discoveryv1.EndpointSlice, _ bool) {
	if svc, ok := managedService(s); ok {
		h.r.tracker.observed(svc, s)
		h.q.Add(reconcile.Request{NamespacedName: svc})
	}
}

func (h *sliceHandler) OnUpdate(old, cur *discoveryv1.EndpointSlice) {
	if old.ResourceVersion == cur.ResourceVersion {
		return
	}
	// A slice relabelled away from (or to) this controller or Service
	// concerns both.
	if svc, ok := managedService(old); ok && old.Labels[discoveryv1.LabelServiceName] != cur.Labels[discoveryv1.LabelServiceName] {
		h.q.Add(reconcile.Request{NamespacedName: svc})
	}
	h.OnAdd(cur, false)
}

func (h *sliceHandler) OnDelete(s *discoveryv1.EndpointSlice, _ bool) {
	if svc, ok := managedService(s); ok {
		h.r.tracker.deleted(svc, s.Name)
		h.q.Add(reconcile.Request{NamespacedName: svc})
	}
}
