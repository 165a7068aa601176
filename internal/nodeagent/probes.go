package nodeagent

import (
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Probe timings, as the kubelet's prober workers run them: a worker
// probes when the container starts and then every periodSeconds; probes
// before initialDelaySeconds are skipped; a result counts once it has
// repeated successThreshold (failureThreshold) times. Readiness and
// liveness probes wait for the startup probe to succeed. The simulated
// probes succeed, unless a knob (knobs.go) makes them fail.

// Defaults of the probe fields (the API server defaults them too).
const (
	defaultProbePeriod    = 10 * time.Second
	defaultProbeThreshold = 3
)

func probePeriod(p *corev1.Probe) time.Duration {
	if p.PeriodSeconds > 0 {
		return time.Duration(p.PeriodSeconds) * time.Second
	}
	return defaultProbePeriod
}

// firstTick is the offset, from the container's start, of the first probe
// at or after from that is not skipped for initialDelaySeconds.
func firstTick(p *corev1.Probe, from time.Duration) time.Duration {
	from = max(from, time.Duration(p.InitialDelaySeconds)*time.Second, 0)
	period := probePeriod(p)
	k := (from + period - 1) / period
	return k * period
}

// probeTimes are the offsets from a run's start at which the container
// turns started and ready, and is killed by its liveness probe; a negative
// offset means never.
type probeTimes struct {
	started, ready, livenessKill time.Duration
	// livenessFail is when the first failing liveness probe runs.
	livenessFail time.Duration
}

// computeProbes derives a run's probe times from the container's probes
// and knobs.
func computeProbes(spec *corev1.Container, k knobs) probeTimes {
	t := probeTimes{ready: -1, livenessKill: -1, livenessFail: -1}
	if spec == nil {
		return t
	}
	if sp := spec.StartupProbe; sp != nil {
		t.started = firstTick(sp, 0)
	}
	if !k.notReady {
		if rp := spec.ReadinessProbe; rp != nil {
			succ := max(rp.SuccessThreshold, 1)
			t.ready = firstTick(rp, max(t.started, k.readyAfter)) + time.Duration(succ-1)*probePeriod(rp)
		} else {
			t.ready = max(t.started, k.readyAfter)
		}
	}
	if lp := spec.LivenessProbe; lp != nil && k.livenessFailAfter > 0 {
		fail := lp.FailureThreshold
		if fail <= 0 {
			fail = defaultProbeThreshold
		}
		t.livenessFail = firstTick(lp, max(t.started, k.livenessFailAfter))
		t.livenessKill = t.livenessFail + time.Duration(fail-1)*probePeriod(lp)
	}
	return t
}
