package controllermanager

import (
	"math/rand/v2"
	"time"

	"github.com/setpoint-dev/setpoint/internal/nodeagent"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/rest"
)

// Client limits of setpoint's own controller manager and scheduler: none
// (a negative QPS), unless --kube-api-qps/--kube-api-burst (Common.QPS,
// Burst) set them. Kubernetes' defaults are lower (kube-controller-manager
// 20/30, kube-scheduler 50/100), and setpoint's benchmarks run the
// reference components with 1000/1000 so that neither side is held back by
// its own client; setpoint's components rely on the server's priority and
// fairness instead, as controller-runtime does since it turned client-side
// limits off. Each client has its own bucket when limits are set: with
// --use-service-account-credentials every controller's identity has one.
// The simulated nodes keep the kubelet's 50/100 each.
const (
	ControllerManagerQPS   float32 = -1
	ControllerManagerBurst         = 0
	SchedulerQPS           float32 = -1
	SchedulerBurst                 = 0
)

// MinResyncPeriod is kube-controller-manager's --min-resync-period: its
// shared informers resync every MinResyncPeriod times a factor drawn once
// per process from [1, 2), so between 12 and 24 hours.
const MinResyncPeriod = 12 * time.Hour

// limits are a component manager's client limits and resync.
type limits struct {
	qps   float32
	burst int
	// sync is manager.Options.SyncPeriod; jitter its SyncPeriodJitter.
	sync   time.Duration
	jitter func(time.Duration) time.Duration
}

// controllerManagerLimits: ControllerManagerQPS/Burst unless c sets them;
// every informer resyncs after the same MinResyncPeriod × [1, 2), as
// kube-controller-manager's informer factory. The controllers that keep
// periods of their own (the HPA's 15 s, the resource quota's 5 minutes,
// the persistentvolume binder's 15 s) run them through RequeueAfter or
// their own resync source.
func controllerManagerLimits(c Common) limits {
	factor := 1 + rand.Float64()
	return limits{qps: or(c.QPS, ControllerManagerQPS), burst: or(c.Burst, ControllerManagerBurst),
		sync: MinResyncPeriod, jitter: func(d time.Duration) time.Duration { return time.Duration(float64(d) * factor) }}
}

// schedulerLimits: SchedulerQPS/Burst unless c sets them; no resync, as
// kube-scheduler's informers.
func schedulerLimits(c Common) limits {
	return limits{qps: or(c.QPS, SchedulerQPS), burst: or(c.Burst, SchedulerBurst), sync: -1}
}

// nodeAgentLimits: the agent's shared client (its informers, and the
// writes of nodes without credentials of their own) gets the limits of as
// many kubelets as it simulates, unless c sets them; each node with its
// own credentials has a kubelet's (nodeagent.Options.KubeAPIQPS). No
// resync, as the kubelet's informers.
func nodeAgentLimits(c Common, a nodeagent.Options) limits {
	n := max(a.Count, 1)
	qps, burst := a.KubeAPIQPS, a.KubeAPIBurst
	if qps == 0 {
		qps = nodeagent.DefaultKubeAPIQPS
	}
	if burst == 0 {
		burst = nodeagent.DefaultKubeAPIBurst
	}
	if qps > 0 {
		qps *= float32(n)
	}
	return limits{qps: or(c.QPS, qps), burst: or(c.Burst, burst*n), sync: -1}
}

func or[T float32 | int](v, def T) T {
	if v != 0 {
		return v
	}
	return def
}

// setOn sets the limits on a manager's options.
func (l limits) setOn(mo *manager.Options) {
	mo.QPS, mo.Burst = l.qps, l.burst
	mo.SyncPeriod, mo.SyncPeriodJitter = l.sync, l.jitter
}

// apply returns a copy of cfg with the limits' QPS and burst.
func (l limits) apply(cfg *rest.Config) *rest.Config {
	if cfg == nil {
		return nil
	}
	cp := *cfg
	cp.QPS, cp.Burst = l.qps, l.burst
	return &cp
}
