package endpointutil

import (
	"fmt"
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// ShouldPodBeInEndpoints says whether pod has an endpoint at all: not
// terminal (Succeeded, Failed), with an IP, and, unless includeTerminating,
// not being deleted.
func ShouldPodBeInEndpoints(pod *corev1.Pod, includeTerminating bool) bool {
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return false
	}
	if pod.Status.PodIP == "" && len(pod.Status.PodIPs) == 0 {
		return false
	}
	return includeTerminating || pod.DeletionTimestamp == nil
}

// ShouldSetHostname says whether pod's endpoint in svc carries its
// hostname: the pod names one and its subdomain is the Service.
func ShouldSetHostname(pod *corev1.Pod, svc *corev1.Service) bool {
	return pod.Spec.Hostname != "" && pod.Spec.Subdomain == svc.Name && pod.Namespace == svc.Namespace
}

// FindPort resolves sp's targetPort on pod: a number as is, a name
// through the ports of the pod's containers (then of its sidecars,
// restartable init containers) with sp's protocol.
func FindPort(pod *corev1.Pod, sp *corev1.ServicePort) (int32, error) {
	tp := sp.TargetPort
	if tp.Type == intstr.Int {
		if tp.IntVal == 0 {
			return sp.Port, nil
		}
		return tp.IntVal, nil
	}
	proto := sp.Protocol
	if proto == "" {
		proto = corev1.ProtocolTCP
	}
	find := func(cs []corev1.Container, sidecarsOnly bool) (int32, bool) {
		for i := range cs {
			if sidecarsOnly && (cs[i].RestartPolicy == nil || *cs[i].RestartPolicy != corev1.ContainerRestartPolicyAlways) {
				continue
			}
			for _, p := range cs[i].Ports {
				pp := p.Protocol
				if pp == "" {
					pp = corev1.ProtocolTCP
				}
				if p.Name == tp.StrVal && pp == proto {
					return p.ContainerPort, true
				}
			}
		}
		return 0, false
	}
	if n, ok := find(pod.Spec.Containers, false); ok {
		return n, nil
	}
	if n, ok := find(pod.Spec.InitContainers, true); ok {
		return n, nil
	}
	return 0, fmt.Errorf("no suitable port for manifest: %s", pod.UID)
}

// IsIPv6 says whether s parses as an IPv6 address.
func IsIPv6(s string) bool {
	a, err := netip.ParseAddr(s)
	return err == nil && a.Is6() && !a.Is4In6()
}

// FamilyOf returns the IP family of s, "" when s is no IP.
func FamilyOf(s string) corev1.IPFamily {
	a, err := netip.ParseAddr(s)
	switch {
	case err != nil:
		return ""
	case a.Is4() || a.Is4In6():
		return corev1.IPv4Protocol
	default:
		return corev1.IPv6Protocol
	}
}

// PodIPs returns the pod's IPs (status.podIPs, or status.podIP alone).
func PodIPs(pod *corev1.Pod) []string {
	if len(pod.Status.PodIPs) == 0 {
		if pod.Status.PodIP == "" {
			return nil
		}
		return []string{pod.Status.PodIP}
	}
	out := make([]string, len(pod.Status.PodIPs))
	for i, ip := range pod.Status.PodIPs {
		out[i] = ip.IP
	}
	return out
}

// PodIPOfFamily returns the first pod IP of family, "" when none.
func PodIPOfFamily(pod *corev1.Pod, family corev1.IPFamily) string {
	for _, ip := range PodIPs(pod) {
		if FamilyOf(ip) == family {
			return ip
		}
	}
	return ""
}

// ServiceFamily is the IP family of svc's Endpoints addresses: its first
// ipFamily; else the family of its cluster IP; else (a headless Service
// from before dual-stack) the family of pod's first IP.
func ServiceFamily(svc *corev1.Service, pod *corev1.Pod) corev1.IPFamily {
	if len(svc.Spec.IPFamilies) > 0 {
		return svc.Spec.IPFamilies[0]
	}
	if f := FamilyOf(svc.Spec.ClusterIP); f != "" {
		return f
	}
	if ips := PodIPs(pod); len(ips) > 0 {
		return FamilyOf(ips[0])
	}
	return corev1.IPv4Protocol
}

// IsServiceIPSet says whether svc has a cluster IP (it is not headless).
func IsServiceIPSet(svc *corev1.Service) bool {
	return svc.Spec.ClusterIP != corev1.ClusterIPNone && svc.Spec.ClusterIP != ""
}
