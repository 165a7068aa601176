package podsecurity

import "time"

// SetPodCheckLimits changes how many existing pods, and for how long, a
// new enforce level is checked against (3000 and 1 s by default).
func SetPodCheckLimits(p *Plugin, maxPods int, timeout time.Duration) {
	p.maxPodsChecked, p.podCheckTimeout = maxPods, timeout
}
