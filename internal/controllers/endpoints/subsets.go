package endpoints

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"

	"github.com/setpoint-dev/setpoint/internal/controllers/endpointutil"
	"github.com/setpoint-dev/setpoint/internal/controllers/podutil"
)

// DesiredSubsets returns the subsets svc's Endpoints list for pods (the
// pods its selector matches), in canonical form.
func DesiredSubsets(svc *corev1.Service, pods []*corev1.Pod) []corev1.EndpointSubset {
	b := newBuilder()
	headless := svc.Spec.ClusterIP == corev1.ClusterIPNone
	for _, pod := range pods {
		if !endpointutil.ShouldPodBeInEndpoints(pod, svc.Spec.PublishNotReadyAddresses) {
			continue
		}
		ip := endpointutil.PodIPOfFamily(pod, endpointutil.ServiceFamily(svc, pod))
		if ip == "" {
			continue
		}
		addr := corev1.EndpointAddress{IP: ip, NodeName: nodeNameOf(pod),
			TargetRef: &corev1.ObjectReference{Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID}}
		if endpointutil.ShouldSetHostname(pod, svc) {
			addr.Hostname = pod.Spec.Hostname
		}
		ready := svc.Spec.PublishNotReadyAddresses || podutil.IsPodReady(pod)
		if len(svc.Spec.Ports) == 0 {
			if headless {
				b.add(addr, nil, ready)
			}
			continue
		}
		for i := range svc.Spec.Ports {
			sp := &svc.Spec.Ports[i]
			n, err := endpointutil.FindPort(pod, sp)
			if err != nil {
				continue
			}
			b.add(addr, &corev1.EndpointPort{Name: sp.Name, Port: n, Protocol: sp.Protocol, AppProtocol: sp.AppProtocol}, ready)
		}
	}
	return b.subsets()
}

func nodeNameOf(pod *corev1.Pod) *string {
	n := pod.Spec.NodeName
	return &n
}

// builder groups addresses by the set of ports they offer. An address is
// identified by IP and pod UID; not ready for one port means not ready.
type builder struct {
	addrs map[addrKey]*entry
	order []addrKey
}

type addrKey struct {
	ip  string
	uid types.UID
}

type entry struct {
	addr  corev1.EndpointAddress
	ports []corev1.EndpointPort
	// portless is set for a headless Service's address without ports.
	portless bool
	ready    bool
}

func newBuilder() *builder { return &builder{addrs: map[addrKey]*entry{}} }

func (b *builder) add(addr corev1.EndpointAddress, port *corev1.EndpointPort, ready bool) {
	k := addrKey{ip: addr.IP}
	if addr.TargetRef != nil {
		k.uid = addr.TargetRef.UID
	}
	e := b.addrs[k]
	if e == nil {
		e = &entry{addr: addr, ready: ready}
		b.addrs[k] = e
		b.order = append(b.order, k)
	}
	e.ready = e.ready && ready
	if port == nil {
		e.portless = true
		return
	}
	if !slices.Contains(e.ports, *port) {
		e.ports = append(e.ports, *port)
	}
}

// subsets returns one subset per distinct port set, sorted.
func (b *builder) subsets() []corev1.EndpointSubset {
	bySet := map[string]*corev1.EndpointSubset{}
	var keys []string
	for _, k := range b.order {
		e := b.addrs[k]
		slices.SortFunc(e.ports, comparePorts)
		sk := portSetKey(e.ports)
		ss := bySet[sk]
		if ss == nil {
			ss = &corev1.EndpointSubset{Ports: e.ports}
			bySet[sk] = ss
			keys = append(keys, sk)
		}
		if e.ready {
			ss.Addresses = append(ss.Addresses, e.addr)
		} else {
			ss.NotReadyAddresses = append(ss.NotReadyAddresses, e.addr)
		}
	}
	slices.Sort(keys)
	out := make([]corev1.EndpointSubset, 0, len(keys))
	for _, k := range keys {
		ss := bySet[k]
		slices.SortFunc(ss.Addresses, compareAddresses)
		slices.SortFunc(ss.NotReadyAddresses, compareAddresses)
		out = append(out, *ss)
	}
	return out
}

func comparePorts(a, b corev1.EndpointPort) int {
	return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Port, b.Port), cmp.Compare(a.Protocol, b.Protocol))
}

func portSetKey(ports []corev1.EndpointPort) string {
	var sb strings.Builder
	for _, p := range ports {
		sb.WriteString(p.Name)
		sb.WriteByte(0)
		sb.WriteString(strconv.Itoa(int(p.Port)))
		sb.WriteString(string(p.Protocol))
		if p.AppProtocol != nil {
			sb.WriteString(*p.AppProtocol)
		}
		sb.WriteByte(1)
	}
	return sb.String()
}

func compareAddresses(a, b corev1.EndpointAddress) int {
	if c := strings.Compare(a.IP, b.IP); c != 0 {
		return c
	}
	var ua, ub types.UID
	if a.TargetRef != nil {
		ua = a.TargetRef.UID
	}
	if b.TargetRef != nil {
		ub = b.TargetRef.UID
	}
	return strings.Compare(string(ua), string(ub))
}

// subsetsEqual compares subsets ignoring the resourceVersion of target
// references (a pod's unrelated update must not rewrite its Endpoints).
func subsetsEqual(a, b []corev1.EndpointSubset) bool {
	if len(a) != len(b) {
		return false
	}
	return equality.Semantic.DeepEqual(withoutRefVersions(a), withoutRefVersions(b))
}

func withoutRefVersions(in []corev1.EndpointSubset) []corev1.EndpointSubset {
	out := make([]corev1.EndpointSubset, len(in))
	for i := range in {
		out[i] = *in[i].DeepCopy()
		for _, list := range [][]corev1.EndpointAddress{out[i].Addresses, out[i].NotReadyAddresses} {
			for j := range list {
				if list[j].TargetRef != nil {
					list[j].TargetRef.ResourceVersion = ""
				}
			}
		}
	}
	return out
}

// capacityAnnotationCorrect says whether the over-capacity annotation
// agrees with subsets: absent, and at most MaxCapacity addresses.
func capacityAnnotationCorrect(ann map[string]string, subsets []corev1.EndpointSubset) bool {
	n := 0
	for _, ss := range subsets {
		n += len(ss.Addresses) + len(ss.NotReadyAddresses)
	}
	if n > MaxCapacity {
		return false
	}
	_, ok := ann[corev1.EndpointsOverCapacity]
	return !ok
}

// Truncate cuts ep's subsets down to MaxCapacity addresses and reports
// whether it had to. Ready addresses are kept before not-ready ones; the
// kept share of each subset is proportional to its size (rounded up, the
// last subsets taking what is left).
func Truncate(ep *corev1.Endpoints) bool {
	ready, notReady := 0, 0
	for _, ss := range ep.Subsets {
		ready += len(ss.Addresses)
		notReady += len(ss.NotReadyAddresses)
	}
	if ready+notReady <= MaxCapacity {
		return false
	}
	cutReady := ready > MaxCapacity
	budget, total := MaxCapacity-ready, notReady
	if cutReady {
		budget, total = MaxCapacity, ready
	}
	left := budget
	for i := range ep.Subsets {
		ss := &ep.Subsets[i]
		n := len(ss.NotReadyAddresses)
		if cutReady {
			n = len(ss.Addresses)
		}
		share := min(int(math.Ceil(float64(n)/float64(total)*float64(budget))), left)
		if cutReady {
			ss.Addresses = ss.Addresses[:min(share, len(ss.Addresses))]
			ss.NotReadyAddresses = []corev1.EndpointAddress{}
			left -= len(ss.Addresses)
		} else {
			ss.NotReadyAddresses = ss.NotReadyAddresses[:min(share, len(ss.NotReadyAddresses))]
			left -= len(ss.NotReadyAddresses)
		}
	}
	return true
}
