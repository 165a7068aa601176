package nodeagent

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// The probe arithmetic: first tick at or after the initial delay on the
// period grid, successThreshold successes, startup gating, liveness kill
// after failureThreshold failures.
func TestComputeProbes(t *testing.T) {
	s := time.Second
	probe := func(delay, period, succ, fail int32) *corev1.Probe {
		return &corev1.Probe{InitialDelaySeconds: delay, PeriodSeconds: period, SuccessThreshold: succ, FailureThreshold: fail}
	}
	cases := []struct {
		name string
		spec corev1.Container
		k    knobs
		want probeTimes
	}{
		{"no probes", corev1.Container{}, knobs{}, probeTimes{0, 0, -1, -1}},
		{"readiness", corev1.Container{ReadinessProbe: probe(5, 10, 2, 3)}, knobs{}, probeTimes{0, 20 * s, -1, -1}},
		{"delay on grid", corev1.Container{ReadinessProbe: probe(10, 10, 1, 3)}, knobs{}, probeTimes{0, 10 * s, -1, -1}},
		{"startup gates", corev1.Container{StartupProbe: probe(7, 5, 1, 3), ReadinessProbe: probe(0, 3, 1, 3)}, knobs{},
			probeTimes{10 * s, 12 * s, -1, -1}},
		{"ready-after, no probe", corev1.Container{}, knobs{readyAfter: 4 * s}, probeTimes{0, 4 * s, -1, -1}},
		{"not ready", corev1.Container{ReadinessProbe: probe(0, 10, 1, 3)}, knobs{notReady: true}, probeTimes{0, -1, -1, -1}},
		{"liveness", corev1.Container{LivenessProbe: probe(0, 5, 1, 3)}, knobs{livenessFailAfter: 12 * s},
			probeTimes{0, 0, 25 * s, 15 * s}},
		{"liveness without knob", corev1.Container{LivenessProbe: probe(0, 5, 1, 3)}, knobs{}, probeTimes{0, 0, -1, -1}},
	}
	for _, c := range cases {
		if got := computeProbes(&c.spec, c.k); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}
