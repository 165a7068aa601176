package nodematch

import corev1 "k8s.io/api/core/v1"

// AllHostIPs is the host IP that binds every address; a port claimed
// without a hostIP claims it there.
const AllHostIPs = "0.0.0.0"

// HostPort is one host port a pod claims: its IP (AllHostIPs when none is
// named), protocol (TCP when none is named) and port.
type HostPort struct {
	IP       string
	Protocol corev1.Protocol
	Port     int32
}

// HostPorts lists the host ports of the pod's containers and sidecars
// (restartable init containers), as kube-scheduler's NodePorts filter and
// the kubelet's admission read them; nil when there are none.
func HostPorts(pod *corev1.Pod) []HostPort {
	var out []HostPort
	add := func(ports []corev1.ContainerPort) {
		for _, p := range ports {
			if p.HostPort <= 0 {
				continue
			}
			hp := HostPort{IP: p.HostIP, Protocol: p.Protocol, Port: p.HostPort}
			if hp.IP == "" {
				hp.IP = AllHostIPs
			}
			if hp.Protocol == "" {
				hp.Protocol = corev1.ProtocolTCP
			}
			out = append(out, hp)
		}
	}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			add(c.Ports)
		}
	}
	for i := range pod.Spec.Containers {
		add(pod.Spec.Containers[i].Ports)
	}
	return out
}

// Conflicts reports whether two claims cannot both hold on one node: the
// same protocol and port on the same IP, or where either binds every IP.
func (p HostPort) Conflicts(o HostPort) bool {
	return p.Protocol == o.Protocol && p.Port == o.Port && (p.IP == o.IP || p.IP == AllHostIPs || o.IP == AllHostIPs)
}
