package endpointslice

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/setpoint-dev/setpoint/internal/controllers/endpointutil"
	"github.com/setpoint-dev/setpoint/internal/controllers/podutil"
)

// addressTypes returns the slice address types of svc.
func addressTypes(svc *corev1.Service) []discoveryv1.AddressType {
	var out []discoveryv1.AddressType
	for _, f := range svc.Spec.IPFamilies {
		switch f {
		case corev1.IPv4Protocol:
			out = append(out, discoveryv1.AddressTypeIPv4)
		case corev1.IPv6Protocol:
			out = append(out, discoveryv1.AddressTypeIPv6)
		}
	}
	if len(out) > 0 {
		return out
	}
	if endpointutil.IsServiceIPSet(svc) {
		if endpointutil.IsIPv6(svc.Spec.ClusterIP) {
			return []discoveryv1.AddressType{discoveryv1.AddressTypeIPv6}
		}
		return []discoveryv1.AddressType{discoveryv1.AddressTypeIPv4}
	}
	return []discoveryv1.AddressType{discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6}
}

func familyOf(t discoveryv1.AddressType) corev1.IPFamily {
	if t == discoveryv1.AddressTypeIPv6 {
		return corev1.IPv6Protocol
	}
	return corev1.IPv4Protocol
}

// group is the desired endpoints of one port set of one address type.
type group struct {
	ports     []discoveryv1.EndpointPort
	endpoints map[string]discoveryv1.Endpoint
}

// desired returns, per address type and port-set key, what svc's slices
// should list. Pods on nodes missing from the cache are left out unless
// the Service publishes not-ready addresses; the error names them.
func (r *reconciler) desired(svc *corev1.Service, pods []*corev1.Pod, types []discoveryv1.AddressType) (map[discoveryv1.AddressType]map[string]*group, error) {
	out := make(map[discoveryv1.AddressType]map[string]*group, len(types))
	for _, t := range types {
		out[t] = map[string]*group{}
	}
	var errs []string
	for _, pod := range pods {
		if !endpointutil.ShouldPodBeInEndpoints(pod, true) {
			continue
		}
		node, err := r.nodeInf.Lister().Get(pod.Spec.NodeName)
		if err != nil {
			if !apierrors.IsNotFound(err) {
				return nil, fmt.Errorf("get node %s from cache: %w", pod.Spec.NodeName, err)
			}
			node = nil
			if !svc.Spec.PublishNotReadyAddresses {
				errs = append(errs, fmt.Sprintf("skipping Pod %s for Service %s/%s: Node %s Not Found", pod.Name, svc.Namespace, svc.Name, pod.Spec.NodeName))
				continue
			}
		}
		ports := endpointPorts(svc, pod)
		key := portsKey(ports)
		for _, t := range types {
			ep, ok := podToEndpoint(pod, node, svc, t)
			if !ok {
				continue
			}
			g := out[t][key]
			if g == nil {
				g = &group{ports: ports, endpoints: map[string]discoveryv1.Endpoint{}}
				out[t][key] = g
			}
			g.endpoints[endpointKey(&ep)] = ep
		}
	}
	if len(errs) > 0 {
		return out, fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return out, nil
}

// endpointPorts resolves svc's ports on pod, in the Service's order.
func endpointPorts(svc *corev1.Service, pod *corev1.Pod) []discoveryv1.EndpointPort {
	out := []discoveryv1.EndpointPort{}
	if len(svc.Spec.Ports) == 0 && svc.Spec.ClusterIP == corev1.ClusterIPNone {
		return out
	}
	for i := range svc.Spec.Ports {
		sp := &svc.Spec.Ports[i]
		n, err := endpointutil.FindPort(pod, sp)
		if err != nil {
			continue
		}
		name, proto := sp.Name, sp.Protocol
		out = append(out, discoveryv1.EndpointPort{Name: &name, Port: &n, Protocol: &proto, AppProtocol: sp.AppProtocol})
	}
	return out
}

// portsKey identifies a port set whatever its order.
func portsKey(ports []discoveryv1.EndpointPort) string {
	parts := make([]string, len(ports))
	for i, p := range ports {
		var b strings.Builder
		if p.Name != nil {
			b.WriteString(*p.Name)
		}
		b.WriteByte('/')
		if p.Port != nil {
			b.WriteString(strconv.Itoa(int(*p.Port)))
		}
		b.WriteByte('/')
		if p.Protocol != nil {
			b.WriteString(string(*p.Protocol))
		}
		b.WriteByte('/')
		if p.AppProtocol != nil {
			b.WriteString(*p.AppProtocol)
		}
		parts[i] = b.String()
	}
	slices.Sort(parts)
	return strings.Join(parts, "|")
}

// podToEndpoint is pod's endpoint in a slice of type t; false when the
// pod has no IP of that family.
func podToEndpoint(pod *corev1.Pod, node *corev1.Node, svc *corev1.Service, t discoveryv1.AddressType) (discoveryv1.Endpoint, bool) {
	var addrs []string
	for _, ip := range endpointutil.PodIPs(pod) {
		if endpointutil.FamilyOf(ip) == familyOf(t) {
			addrs = append(addrs, ip)
		}
	}
	if len(addrs) == 0 {
		return discoveryv1.Endpoint{}, false
	}
	serving := podutil.IsPodReady(pod)
	terminating := pod.DeletionTimestamp != nil
	ready := svc.Spec.PublishNotReadyAddresses || (serving && !terminating)
	ep := discoveryv1.Endpoint{
		Addresses:  addrs,
		Conditions: discoveryv1.EndpointConditions{Ready: &ready, Serving: &serving, Terminating: &terminating},
		TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID},
	}
	if pod.Spec.NodeName != "" {
		n := pod.Spec.NodeName
		ep.NodeName = &n
	}
	if node != nil {
		if z := node.Labels[corev1.LabelTopologyZone]; z != "" {
			ep.Zone = &z
		}
	}
	if endpointutil.ShouldSetHostname(pod, svc) {
		h := pod.Spec.Hostname
		ep.Hostname = &h
	}
	return ep, true
}

// endpointKey identifies an endpoint across syncs: its pod and addresses.
func endpointKey(ep *discoveryv1.Endpoint) string {
	uid := ""
	if ep.TargetRef != nil {
		uid = string(ep.TargetRef.UID)
	}
	return uid + "|" + strings.Join(ep.Addresses, ",")
}
