package endpointslicemirroring

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/setpoint-dev/setpoint/controller"
	"github.com/setpoint-dev/setpoint/handler"
	"github.com/setpoint-dev/setpoint/informer"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/reconcile"
	"github.com/setpoint-dev/setpoint/rest"
)

// Kubernetes' names and defaults.
const (
	// ControllerName names the controller (queue, metrics, logs).
	ControllerName = "endpointslicemirroring"
	// ManagedBy is the managed-by label of mirrored slices.
	ManagedBy = "endpointslicemirroring-controller.k8s.io"
	// DefaultWorkers is --mirroring-concurrent-service-endpoint-syncs'.
	DefaultWorkers = 5
	// MaxEndpointsPerSubset is --mirroring-max-endpoints-per-subset's
	// default: addresses mirrored per subset, and endpoints per slice.
	MaxEndpointsPerSubset = 1000
	leaderAnnotation      = "control-plane.alpha.kubernetes.io/leader"
)

var (
	svcGVR   = corev1.SchemeGroupVersion.WithResource("services")
	epGVR    = corev1.SchemeGroupVersion.WithResource("endpoints")
	sliceGVR = discoveryv1.SchemeGroupVersion.WithResource("endpointslices")
	epGVK    = corev1.SchemeGroupVersion.WithKind("Endpoints")
)

// Options tune the controller; the zero value means Kubernetes' defaults.
type Options struct {
	// Workers is the number of names synced at once (default 5).
	Workers int
}

type reconciler struct {
	svcInf   *informer.Informer[*corev1.Service]
	epInf    *informer.Informer[*corev1.Endpoints]
	sliceInf *informer.Informer[*discoveryv1.EndpointSlice]
	slices   *rest.Resource[*discoveryv1.EndpointSlice, *discoveryv1.EndpointSliceList]
	// created holds, per name, the slices created and not yet in the
	// cache: a sync before they show would create them again.
	mu      sync.Mutex
	created map[types.NamespacedName]map[string]bool
}

// unseen says whether a slice created for key is missing from cached,
// forgetting the ones that showed up.
func (r *reconciler) unseen(key types.NamespacedName, cached []*discoveryv1.EndpointSlice) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	names := r.created[key]
	for _, s := range cached {
		delete(names, s.Name)
	}
	if len(names) == 0 {
		delete(r.created, key)
		return false
	}
	return true
}

func (r *reconciler) markCreated(key types.NamespacedName, name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.created[key] == nil {
		r.created[key] = map[string]bool{}
	}
	r.created[key][name] = true
}

// ServiceAccount is the controller's identity: kube-controller-manager's
// ServiceAccount for it in kube-system (see manager.ClientFor).
const ServiceAccount = "endpointslicemirroring-controller"

// Add registers the controller on mgr; it runs while mgr leads.
func Add(mgr *manager.Manager, opts Options) error {
	c, err := mgr.ClientFor(ServiceAccount)
	if err != nil {
		return fmt.Errorf("endpointslicemirroring: %w", err)
	}
	if opts.Workers <= 0 {
		opts.Workers = DefaultWorkers
	}
	r := &reconciler{
		svcInf:   manager.InformerFor[*corev1.Service](mgr, svcGVR, true),
		epInf:    manager.InformerFor[*corev1.Endpoints](mgr, epGVR, true),
		sliceInf: manager.InformerFor[*discoveryv1.EndpointSlice](mgr, sliceGVR, true),
		slices:   rest.For[*discoveryv1.EndpointSlice, *discoveryv1.EndpointSliceList](c, sliceGVR, true),
		created:  map[types.NamespacedName]map[string]bool{},
	}
	copts := mgr.ControllerOptions()
	copts.MaxConcurrentReconciles = opts.Workers
	ctrl, err := controller.New(ControllerName, r, copts)
	if err != nil {
		return fmt.Errorf("endpointslicemirroring: %w", err)
	}
	for _, src := range []controller.Source{
		controller.Kind(r.svcInf, "v1 services", handler.Object[*corev1.Service]()),
		controller.Kind(r.epInf, "v1 endpoints", handler.Object[*corev1.Endpoints]()),
		controller.Kind(r.sliceInf, "discovery.k8s.io/v1 endpointslices", mirroredName),
	} {
		if err := ctrl.Watch(src); err != nil {
			return fmt.Errorf("endpointslicemirroring: %w", err)
		}
	}
	return mgr.Add(ctrl)
}

// mirroredName maps a mirrored slice to its Endpoints' name.
func mirroredName(s *discoveryv1.EndpointSlice) []reconcile.Request {
	name := s.Labels[discoveryv1.LabelServiceName]
	if s.Labels[discoveryv1.LabelManagedBy] != ManagedBy || name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: s.Namespace, Name: name}}}
}

// Reconcile implements reconcile.Reconciler.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	ns, name := req.Namespace, req.Name
	existing, err := r.sliceInf.Lister().Namespace(ns).List(labels.SelectorFromSet(labels.Set{
		discoveryv1.LabelServiceName: name, discoveryv1.LabelManagedBy: ManagedBy}))
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("mirrored slices of %s from cache: %w", req, err)
	}
	if r.unseen(req.NamespacedName, existing) {
		return reconcile.Result{RequeueAfter: 100 * time.Millisecond}, nil
	}
	ep, mirror, err := r.toMirror(ns, name)
	if err != nil {
		return reconcile.Result{}, err
	}
	if !mirror {
		return reconcile.Result{}, r.deleteAll(ctx, existing)
	}
	return reconcile.Result{}, r.sync(ctx, ep, existing)
}

// toMirror returns the Endpoints to mirror, or false when none is.
func (r *reconciler) toMirror(ns, name string) (*corev1.Endpoints, bool, error) {
	ep, err := r.epInf.Lister().Namespace(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("get endpoints %s/%s from cache: %w", ns, name, err)
	}
	if ep.Labels[discoveryv1.LabelSkipMirror] == "true" {
		return nil, false, nil
	}
	if _, ok := ep.Annotations[leaderAnnotation]; ok {
		return nil, false, nil
	}
	svc, err := r.svcInf.Lister().Namespace(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("get service %s/%s from cache: %w", ns, name, err)
	}
	return ep, svc.Spec.Selector == nil, nil
}

func (r *reconciler) deleteAll(ctx context.Context, list []*discoveryv1.EndpointSlice) error {
	var errs []error
	for _, s := range list {
		if err := r.slices.Namespace(s.Namespace).Delete(ctx, s.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("delete endpointslice %s/%s: %w", s.Namespace, s.Name, err))
		}
	}
	return errors.Join(errs...)
}

// group is the mirrored endpoints of one address type and port set.
type group struct {
	addrType  discoveryv1.AddressType
	ports     []discoveryv1.EndpointPort
	endpoints []discoveryv1.Endpoint
}

// desired groups ep's addresses by address type and ports.
func desired(ep *corev1.Endpoints) map[string]*group {
	out := map[string]*group{}
	for _, ss := range ep.Subsets {
		ports := toSlicePorts(ss.Ports)
		pk := portsKey(ports)
		n := 0
		add := func(a corev1.EndpointAddress, ready bool) {
			if n >= MaxEndpointsPerSubset {
				return
			}
			ip, err := netip.ParseAddr(a.IP)
			if err != nil {
				return
			}
			n++
			t := discoveryv1.AddressTypeIPv4
			if ip.Is6() && !ip.Is4In6() {
				t = discoveryv1.AddressTypeIPv6
			}
			k := string(t) + "|" + pk
			g := out[k]
			if g == nil {
				g = &group{addrType: t, ports: ports}
				out[k] = g
			}
			e := discoveryv1.Endpoint{Addresses: []string{ip.Unmap().String()}, Conditions: discoveryv1.EndpointConditions{Ready: &ready},
				TargetRef: a.TargetRef, NodeName: a.NodeName}
			if a.Hostname != "" {
				h := a.Hostname
				e.Hostname = &h
			}
			g.endpoints = append(g.endpoints, e)
		}
		for _, a := range ss.Addresses {
			add(a, true)
		}
		for _, a := range ss.NotReadyAddresses {
			add(a, false)
		}
	}
	return out
}

func toSlicePorts(in []corev1.EndpointPort) []discoveryv1.EndpointPort {
	out := make([]discoveryv1.EndpointPort, 0, len(in))
	for _, p := range in {
		name, port, proto := p.Name, p.Port, p.Protocol
		out = append(out, discoveryv1.EndpointPort{Name: &name, Port: &port, Protocol: &proto, AppProtocol: p.AppProtocol})
	}
	return out
}

func portsKey(ports []discoveryv1.EndpointPort) string {
	parts := make([]string, len(ports))
	for i, p := range ports {
		ap := ""
		if p.AppProtocol != nil {
			ap = *p.AppProtocol
		}
		parts[i] = *p.Name + "/" + strconv.Itoa(int(*p.Port)) + "/" + string(*p.Protocol) + "/" + ap
	}
	sort.Strings(parts)
	return strings.Join(parts, "|")
}

// meta returns the labels and annotations of ep's slices.
func meta(ep *corev1.Endpoints) (map[string]string, map[string]string) {
	lbls := maps.Clone(ep.Labels)
	if lbls == nil {
		lbls = map[string]string{}
	}
	lbls[discoveryv1.LabelServiceName] = ep.Name
	lbls[discoveryv1.LabelManagedBy] = ManagedBy
	ann := map[string]string{}
	for k, v := range ep.Annotations {
		if k != corev1.EndpointsLastChangeTriggerTime && k != corev1.LastAppliedConfigAnnotation {
			ann[k] = v
		}
	}
	return lbls, ann
}

// sync makes the mirrored slices of ep match it.
func (r *reconciler) sync(ctx context.Context, ep *corev1.Endpoints, existing []*discoveryv1.EndpointSlice) error {
	want := desired(ep)
	lbls, ann := meta(ep)
	byKey := map[string][]*discoveryv1.EndpointSlice{}
	var surplus []*discoveryv1.EndpointSlice
	for _, s := range existing {
		if s.DeletionTimestamp != nil {
			continue
		}
		if ref := metav1.GetControllerOfNoCopy(s); ref == nil || ref.UID != ep.UID {
			surplus = append(surplus, s)
			continue
		}
		k := string(s.AddressType) + "|" + portsKey(s.Ports)
		byKey[k] = append(byKey[k], s)
	}
	for k, list := range byKey {
		if want[k] == nil {
			surplus = append(surplus, list...)
		}
	}
	api := r.slices.Namespace(ep.Namespace)
	var errs []error
	keys := slices.Sorted(maps.Keys(want))
	for _, k := range keys {
		g := want[k]
		have := byKey[k]
		sort.Slice(have, func(i, j int) bool { return have[i].Name < have[j].Name })
		for i := 0; i*MaxEndpointsPerSubset < len(g.endpoints); i++ {
			chunk := g.endpoints[i*MaxEndpointsPerSubset : min((i+1)*MaxEndpointsPerSubset, len(g.endpoints))]
			if i < len(have) {
				s := have[i]
				if equality.Semantic.DeepEqual(s.Endpoints, chunk) && equality.Semantic.DeepEqual(s.Ports, g.ports) &&
					maps.Equal(s.Labels, lbls) && maps.Equal(s.Annotations, ann) {
					continue
				}
				cp := s.DeepCopy()
				cp.Endpoints, cp.Ports, cp.Labels, cp.Annotations = chunk, g.ports, lbls, ann
				if _, err := api.Update(ctx, cp, metav1.UpdateOptions{}); err != nil {
					errs = append(errs, fmt.Errorf("update endpointslice %s/%s: %w", s.Namespace, s.Name, err))
				}
				continue
			}
			s := &discoveryv1.EndpointSlice{
				ObjectMeta: metav1.ObjectMeta{GenerateName: ep.Name + "-", Namespace: ep.Namespace, Labels: lbls, Annotations: ann,
					OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(ep, epGVK)}},
				AddressType: g.addrType, Ports: g.ports, Endpoints: chunk,
			}
			out, err := api.Create(ctx, s, metav1.CreateOptions{})
			switch {
			case err == nil:
				r.markCreated(types.NamespacedName{Namespace: ep.Namespace, Name: ep.Name}, out.Name)
			case !apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
				errs = append(errs, fmt.Errorf("create endpointslice for %s/%s: %w", ep.Namespace, ep.Name, err))
			}
		}
		if n := (len(g.endpoints) + MaxEndpointsPerSubset - 1) / MaxEndpointsPerSubset; n < len(have) {
			surplus = append(surplus, have[n:]...)
		}
	}
	errs = append(errs, r.deleteAll(ctx, surplus))
	return errors.Join(errs...)
}
