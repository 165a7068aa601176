package endpointslice

import (
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

var (
	svcGVK     = corev1.SchemeGroupVersion.WithKind("Service")
	createOpts = metav1.CreateOptions{}
	updateOpts = metav1.UpdateOptions{}
	deleteOpts = metav1.DeleteOptions{}
)

func keyOf(svc *corev1.Service) types.NamespacedName {
	return types.NamespacedName{Namespace: svc.Namespace, Name: svc.Name}
}

// plan is the writes of one sync. Slices in create and update are new
// objects; del holds cached ones.
type plan struct {
	create, update, del []*discoveryv1.EndpointSlice
}

// plan compares the cached slices of svc with what they should list.
func (r *reconciler) plan(svc *corev1.Service, cached []*discoveryv1.EndpointSlice,
	want map[discoveryv1.AddressType]map[string]*group, types []discoveryv1.AddressType) *plan {
	p := &plan{}
	byType := map[discoveryv1.AddressType][]*discoveryv1.EndpointSlice{}
	for _, s := range cached {
		switch {
		case s.DeletionTimestamp != nil:
		case !ownedBy(s, svc) || !slices.Contains(types, s.AddressType):
			p.del = append(p.del, s)
		default:
			byType[s.AddressType] = append(byType[s.AddressType], s)
		}
	}
	lbls := sliceLabels(svc)
	for _, t := range types {
		sub := &plan{}
		existing := byType[t]
		byPorts := map[string][]*discoveryv1.EndpointSlice{}
		for _, s := range existing {
			k := portsKey(s.Ports)
			byPorts[k] = append(byPorts[k], s)
		}
		for k, list := range byPorts {
			if want[t][k] == nil {
				sub.del = append(sub.del, list...)
			}
		}
		keys := make([]string, 0, len(want[t]))
		for k := range want[t] {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			r.planPorts(sub, svc, lbls, t, byPorts[k], want[t][k])
		}
		r.placeholder(sub, svc, lbls, t, len(existing))
		reuse(sub)
		p.create = append(p.create, sub.create...)
		p.update = append(p.update, sub.update...)
		p.del = append(p.del, sub.del...)
	}
	return p
}

// reuse turns the creates of one address type into updates of its slices
// the plan would delete, as Kubernetes' reconciler does before it writes:
// the replaced slice takes the old one's name, so readers never list both
// side by side (e.g. the placeholder, with no ports, beside the slice that
// replaces it once the first endpoint appears). The update carries the
// old slice's resourceVersion: a concurrent change is a conflict, retried.
func reuse(p *plan) {
	for len(p.create) > 0 && len(p.del) > 0 {
		old := p.del[0]
		s := p.create[len(p.create)-1]
		s.Name, s.GenerateName, s.ResourceVersion = old.Name, "", old.ResourceVersion
		p.create = p.create[:len(p.create)-1]
		p.del = p.del[1:]
		p.update = append(p.update, s)
	}
}

// placeholder keeps one empty slice for an address type that would
// otherwise have none.
func (r *reconciler) placeholder(p *plan, svc *corev1.Service, lbls map[string]string, t discoveryv1.AddressType, existing int) {
	if existing != len(p.del) || len(p.create) > 0 {
		return
	}
	if len(p.del) == 1 && len(p.del[0].Endpoints) == 0 && len(p.del[0].Ports) == 0 {
		keep := p.del[0]
		p.del = nil
		if !labelsEqual(keep.Labels, lbls) {
			cp := keep.DeepCopy()
			cp.Labels = lbls
			p.update = append(p.update, cp)
		}
		return
	}
	p.create = append(p.create, newSlice(svc, lbls, t, []discoveryv1.EndpointPort{}))
}

// planPorts reconciles the slices of one address type and port set.
func (r *reconciler) planPorts(p *plan, svc *corev1.Service, lbls map[string]string, t discoveryv1.AddressType,
	existing []*discoveryv1.EndpointSlice, g *group) {
	sort.Slice(existing, func(i, j int) bool { return existing[i].Name < existing[j].Name })
	remaining := make(map[string]discoveryv1.Endpoint, len(g.endpoints))
	for k, ep := range g.endpoints {
		remaining[k] = ep
	}
	var updated, unchanged []*discoveryv1.EndpointSlice
	for _, s := range existing {
		kept := make([]discoveryv1.Endpoint, 0, len(s.Endpoints))
		changed := false
		for i := range s.Endpoints {
			k := endpointKey(&s.Endpoints[i])
			d, ok := remaining[k]
			if !ok {
				changed = true
				continue
			}
			if !equality.Semantic.DeepEqual(d, s.Endpoints[i]) {
				changed = true
			}
			kept = append(kept, d)
			delete(remaining, k)
		}
		switch {
		case len(kept) == 0:
			p.del = append(p.del, s)
		case changed:
			cp := s.DeepCopy()
			cp.Endpoints = kept
			cp.Labels = lbls
			updated = append(updated, cp)
		case !labelsEqual(s.Labels, lbls):
			cp := s.DeepCopy()
			cp.Labels = lbls
			updated = append(updated, cp)
		default:
			unchanged = append(unchanged, s)
		}
	}
	left := sortedEndpoints(remaining)
	// Fill the slices written anyway, fullest first.
	sort.SliceStable(updated, func(i, j int) bool { return len(updated[i].Endpoints) > len(updated[j].Endpoints) })
	for _, s := range updated {
		n := min(r.max-len(s.Endpoints), len(left))
		if n > 0 {
			s.Endpoints = append(s.Endpoints, left[:n]...)
			left = left[n:]
		}
	}
	for len(left) > 0 {
		var s *discoveryv1.EndpointSlice
		if len(left) < r.max {
			if i := fullestFitting(unchanged, len(left), r.max); i >= 0 {
				s = unchanged[i].DeepCopy()
				unchanged = slices.Delete(unchanged, i, i+1)
				updated = append(updated, s)
			}
		}
		if s == nil {
			s = newSlice(svc, lbls, t, g.ports)
			p.create = append(p.create, s)
		}
		n := min(r.max-len(s.Endpoints), len(left))
		s.Endpoints = append(s.Endpoints, left[:n]...)
		left = left[n:]
	}
	p.update = append(p.update, updated...)
}

// fullestFitting returns the index of the slice with the most endpoints
// that still has room for n more, or -1.
func fullestFitting(list []*discoveryv1.EndpointSlice, n, max int) int {
	best := -1
	for i, s := range list {
		if len(s.Endpoints)+n <= max && (best < 0 || len(s.Endpoints) > len(list[best].Endpoints)) {
			best = i
		}
	}
	return best
}

func sortedEndpoints(m map[string]discoveryv1.Endpoint) []discoveryv1.Endpoint {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]discoveryv1.Endpoint, len(keys))
	for i, k := range keys {
		out[i] = m[k]
	}
	return out
}

// newSlice is an empty slice of svc (name generated by the server).
func newSlice(svc *corev1.Service, lbls map[string]string, t discoveryv1.AddressType, ports []discoveryv1.EndpointPort) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName:    slicePrefix(svc.Name),
			Namespace:       svc.Namespace,
			Labels:          lbls,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(svc, svcGVK)},
		},
		AddressType: t,
		Ports:       ports,
		Endpoints:   []discoveryv1.Endpoint{},
	}
}

// ownedBy says whether svc is s's controller.
func ownedBy(s *discoveryv1.EndpointSlice, svc *corev1.Service) bool {
	ref := metav1.GetControllerOfNoCopy(s)
	return ref != nil && ref.UID == svc.UID && ref.Kind == "Service"
}
