package scheduler

import corev1 "k8s.io/api/core/v1"

// reasonPorts is NodePorts' reason.
const reasonPorts = "node(s) didn't have free ports for the requested pod ports"

// allHostIPs is the host IP that binds every address.
const allHostIPs = "0.0.0.0"

// hostPort is one host port a pod claims: its IP ("0.0.0.0" when none is
// named), protocol (TCP when none is named) and port.
type hostPort struct {
	ip       string
	protocol corev1.Protocol
	port     int32
}

// hostPorts lists the host ports of the pod's containers and sidecars
// (restartable init containers), as kube-scheduler's NodePorts reads them;
// nil when there are none.
func hostPorts(pod *corev1.Pod) []hostPort {
	var out []hostPort
	add := func(ports []corev1.ContainerPort) {
		for _, p := range ports {
			if p.HostPort <= 0 {
				continue
			}
			hp := hostPort{ip: p.HostIP, protocol: p.Protocol, port: p.HostPort}
			if hp.ip == "" {
				hp.ip = allHostIPs
			}
			if hp.protocol == "" {
				hp.protocol = corev1.ProtocolTCP
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

// portsConflict reports whether any wanted port is taken on the node: the
// same protocol and port on the same IP, or where either side binds all
// IPs.
func portsConflict(want []hostPort, used map[hostPort]int) bool {
	for _, w := range want {
		if w.ip == allHostIPs {
			for u := range used {
				if u.protocol == w.protocol && u.port == w.port {
					return true
				}
			}
			continue
		}
		if used[w] > 0 || used[hostPort{ip: allHostIPs, protocol: w.protocol, port: w.port}] > 0 {
			return true
		}
	}
	return false
}
