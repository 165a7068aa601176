package scheduler

import "github.com/setpoint-dev/setpoint/internal/nodematch"

// reasonPorts is NodePorts' reason.
const reasonPorts = "node(s) didn't have free ports for the requested pod ports"

// portsConflict reports whether any wanted port is taken on the node: the
// same protocol and port on the same IP, or where either side binds all
// IPs.
func portsConflict(want []nodematch.HostPort, used map[nodematch.HostPort]int) bool {
	for _, w := range want {
		if w.IP == nodematch.AllHostIPs {
			for u := range used {
				if w.Conflicts(u) {
					return true
				}
			}
			continue
		}
		if used[w] > 0 || used[nodematch.HostPort{IP: nodematch.AllHostIPs, Protocol: w.Protocol, Port: w.Port}] > 0 {
			return true
		}
	}
	return false
}
