package nodeagent_test

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/setpoint-dev/setpoint/internal/nodeagent"
)

// Readiness follows the readiness probe's timings; a startup probe holds
// readiness back; the not-ready knob keeps a container unready with an
// Unhealthy event; the liveness knob gets the container killed and
// restarted after failureThreshold failed probes.
func TestProbes(t *testing.T) {
	e := startEnv(t, nodeagent.Options{})
	ready := newPod("ready", corev1.RestartPolicyAlways, "app=nginx")
	ready.Spec.Containers[0].ReadinessProbe = &corev1.Probe{ProbeHandler: httpGet(), InitialDelaySeconds: 5, PeriodSeconds: 10, SuccessThreshold: 2}
	e.createBound(ready, "node-0")
	startup := newPod("startup", corev1.RestartPolicyAlways, "app=nginx")
	startup.Spec.Containers[0].StartupProbe = &corev1.Probe{ProbeHandler: httpGet(), InitialDelaySeconds: 10, PeriodSeconds: 10}
	startup.Spec.Containers[0].ReadinessProbe = &corev1.Probe{ProbeHandler: httpGet(), PeriodSeconds: 1}
	e.createBound(startup, "node-0")
	unready := newPod("unready", corev1.RestartPolicyAlways, "app=nginx")
	unready.Spec.Containers[0].ReadinessProbe = &corev1.Probe{ProbeHandler: httpGet()}
	unready.Annotations = map[string]string{nodeagent.AnnotationNotReady: "true"}
	e.createBound(unready, "node-0")
	live := newPod("live", corev1.RestartPolicyAlways, "app=nginx")
	live.Spec.Containers[0].LivenessProbe = &corev1.Probe{ProbeHandler: httpGet(), PeriodSeconds: 5, FailureThreshold: 3}
	live.Annotations = map[string]string{nodeagent.AnnotationLivenessFailAfter: "10s"}
	e.createBound(live, "node-0")

	for _, name := range []string{"ready", "startup", "unready"} {
		p := e.waitPod(name, "container running", func(p *corev1.Pod) bool { return isRunning(p, "app") })
		if s := containerStatus(p, "app"); s.Ready || podReady(p) {
			t.Errorf("%s at 0s: ready %v", name, s.Ready)
		}
	}
	if s := containerStatus(e.getPod("startup"), "app"); *s.Started {
		t.Error("startup at 0s: started before its startup probe")
	}
	if s := containerStatus(e.getPod("ready"), "app"); !*s.Started {
		t.Error("ready at 0s: not started without a startup probe")
	}
	e.step(10 * time.Second)
	e.waitPod("startup", "ready", running)
	if p := e.getPod("ready"); podReady(p) {
		t.Error("ready at 10s: ready after one success of two")
	}
	e.step(10 * time.Second)
	e.waitPod("ready", "ready", running)
	p := e.waitPod("live", "restarted", func(p *corev1.Pod) bool { return containerStatus(p, "app").RestartCount == 1 })
	last := containerStatus(p, "app").LastTerminationState.Terminated
	if last == nil || last.ExitCode != 137 || last.Reason != "Error" || !last.FinishedAt.Time.Equal(at(20*time.Second)) {
		t.Errorf("live: lastState %+v", last)
	}
	e.waitEvent("live", "Unhealthy", "Liveness probe failed: HTTP probe failed with statuscode: 500")
	e.waitEvent("live", "Killing", "Container app failed liveness probe, will be restarted")
	e.waitEvent("unready", "Unhealthy", "Readiness probe failed: HTTP probe failed with statuscode: 500")
	if p := e.getPod("unready"); podReady(p) || p.Status.Phase != corev1.PodRunning {
		t.Errorf("unready: phase %s ready %v", p.Status.Phase, podReady(p))
	}
}
