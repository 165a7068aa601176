package nodeagent_test

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/setpoint-dev/setpoint/internal/nodeagent"
	"github.com/setpoint-dev/setpoint/internal/testserver"
)

// An agent restarted mid-run rebuilds each pod's lifecycle from its
// status: the init container in progress finishes when it would have, the
// regular container then runs its run time, a container blocked on a
// ConfigMap stays blocked until it appears; nothing is rewritten on
// adoption.
func TestRestartMidLifecycle(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	e := newEnv(t, srv)
	clk := clocktesting.NewFakeClock(epoch)
	e.clk = clk
	stop := e.startStoppableAgent(nodeagent.Options{Count: 1, Clock: clk})
	p := newPod("job", corev1.RestartPolicyNever, "app=busybox")
	p.Spec.InitContainers = []corev1.Container{{Name: "one", Image: "busybox"}, {Name: "two", Image: "busybox"}}
	p.Annotations = map[string]string{nodeagent.AnnotationRunTime: "10s"}
	e.createBound(p, "node-0")
	blocked := newPod("blocked", corev1.RestartPolicyAlways, "app=nginx")
	blocked.Spec.Containers[0].EnvFrom = []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: "later"}}}}
	e.createBound(blocked, "node-0")
	e.waitPod("blocked", "config error", func(p *corev1.Pod) bool { return waitingReason(p, "app") == "CreateContainerConfigError" })
	e.waitPod("job", "one running", func(p *corev1.Pod) bool { return isRunning(p, "one") })
	e.step(15 * time.Second)
	before := e.waitPod("job", "two running", func(p *corev1.Pod) bool { return isRunning(p, "two") })
	stop()

	e.startStoppableAgent(nodeagent.Options{Count: 1, Clock: clk})
	time.Sleep(300 * time.Millisecond)
	if after := e.getPod("job"); after.ResourceVersion != before.ResourceVersion {
		t.Errorf("adoption rewrote the pod: %+v", after.Status)
	}
	e.step(5 * time.Second) // 20s: two done, app runs
	got := e.waitPod("job", "app running", func(p *corev1.Pod) bool { return isRunning(p, "app") })
	if s := containerStatus(got, "app"); !s.State.Running.StartedAt.Time.Equal(at(20 * time.Second)) {
		t.Errorf("app %+v", s.State)
	}
	if term := terminated(got, "two"); term == nil || !term.StartedAt.Time.Equal(at(10*time.Second)) ||
		!term.FinishedAt.Time.Equal(at(20*time.Second)) {
		t.Errorf("two %+v", term)
	}
	e.step(10 * time.Second) // 30s
	got = e.waitPod("job", "succeeded", phase(corev1.PodSucceeded))
	if term := terminated(got, "app"); term == nil || !term.FinishedAt.Time.Equal(at(30*time.Second)) {
		t.Errorf("app %+v", term)
	}
	create[*corev1.ConfigMap, *corev1.ConfigMapList](e, "configmaps", &corev1.ConfigMap{ObjectMeta: meta("later")})
	e.waitPod("blocked", "running", running)
}
