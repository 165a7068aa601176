package nodeagent_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/setpoint-dev/setpoint/internal/nodeagent"
	"github.com/setpoint-dev/setpoint/internal/testserver"
)

// Pods meant to finish: their containers exit after their run time (at
// once by default, for containers that name their program or belong to a
// Job) with their exit code; the pod ends Succeeded or Failed with the
// kubelet's terminated states and conditions; OnFailure restarts a
// failing container after the back-off. A bare image under Never runs
// until deleted.
func TestRunToCompletion(t *testing.T) {
	e := newEnv(t, testserver.Start(t, testserver.Options{}))
	e.startAgentWithCA(nodeagent.Options{Count: 1})
	job := e.createBound(withCommand(newPod("job", corev1.RestartPolicyNever, "app=busybox")), "node-0")
	jobOwned := newPod("job-owned", corev1.RestartPolicyNever, "app=busybox")
	jobOwned.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: "j",
		UID: "0b6c9a8e-0000-4000-8000-000000000001", Controller: ptr.To(true)}}
	e.createBound(jobOwned, "node-0")
	e.createBound(newPod("server", corev1.RestartPolicyNever, "app=agnhost"), "node-0")
	timed := newPod("timed", corev1.RestartPolicyNever, "app=busybox")
	timed.Annotations = map[string]string{nodeagent.AnnotationRunTime: "30s"}
	e.createBound(timed, "node-0")
	fails := withCommand(newPod("fails", corev1.RestartPolicyNever, "app=busybox"))
	fails.Annotations = map[string]string{nodeagent.AnnotationExitCode: "3"}
	e.createBound(fails, "node-0")
	retry := newPod("retry", corev1.RestartPolicyOnFailure, "app=busybox")
	retry.Annotations = map[string]string{nodeagent.AnnotationRunTime: "5s", nodeagent.AnnotationExitCode: "1"}
	retry = e.createBound(retry, "node-0")
	two := newPod("two", corev1.RestartPolicyNever, "a=busybox", "b=busybox")
	two.Annotations = map[string]string{nodeagent.AnnotationRunTime: "a=10s,b=20s", nodeagent.AnnotationExitCode: "b=2"}
	e.createBound(two, "node-0")

	p := e.waitPod("job", "succeeded", phase(corev1.PodSucceeded))
	term := terminated(p, "app")
	if term == nil || term.ExitCode != 0 || term.Reason != "Completed" || !term.StartedAt.Time.Equal(epoch) ||
		!term.FinishedAt.Time.Equal(epoch) || term.ContainerID == "" {
		t.Errorf("job: terminated = %+v", term)
	}
	for _, typ := range []corev1.PodConditionType{corev1.PodReady, corev1.ContainersReady} {
		if c := podCondition(p, typ); c == nil || c.Status != corev1.ConditionFalse || c.Reason != "PodCompleted" || c.Message != "" {
			t.Errorf("job: %s = %+v", typ, c)
		}
	}
	if c := podCondition(p, corev1.PodReadyToStartContainers); c == nil || c.Status != corev1.ConditionFalse {
		t.Errorf("job: PodReadyToStartContainers = %+v", c)
	}
	if p.Status.PodIP == "" || p.Status.StartTime == nil {
		t.Errorf("job: podIP %q startTime %v", p.Status.PodIP, p.Status.StartTime)
	}
	e.wantLog(job.Name, "container=app", started("app")+"[setpoint] container app exited with code 0 (Completed)\n")

	p = e.waitPod("fails", "failed", phase(corev1.PodFailed))
	if term := terminated(p, "app"); term == nil || term.ExitCode != 3 || term.Reason != "Error" {
		t.Errorf("fails: terminated = %+v", term)
	}
	if c := podCondition(p, corev1.PodReady); c == nil || c.Reason != "ContainersNotReady" ||
		c.Message != "containers with unready status: [app]" {
		t.Errorf("fails: Ready = %+v", c)
	}
	e.waitPod("job-owned", "succeeded", phase(corev1.PodSucceeded))
	e.waitPod("timed", "running", running)
	e.waitPod("two", "running", running)
	e.waitPod("server", "running", running)

	e.step(5 * time.Second)
	p = e.waitPod("retry", "backing off", func(p *corev1.Pod) bool { return waitingReason(p, "app") == "CrashLoopBackOff" })
	cs := containerStatus(p, "app")
	wantMsg := fmt.Sprintf("back-off 10s restarting failed container=app pod=retry_default(%s)", retry.UID)
	if cs.RestartCount != 1 || cs.State.Waiting.Message != wantMsg || cs.LastTerminationState.Terminated == nil ||
		cs.LastTerminationState.Terminated.ExitCode != 1 || p.Status.Phase != corev1.PodRunning {
		t.Errorf("retry: status %+v phase %s", cs, p.Status.Phase)
	}
	e.waitEvent("retry", "BackOff", fmt.Sprintf("Back-off restarting failed container app in pod retry_default(%s)", retry.UID))

	e.step(5 * time.Second) // 10s
	p = e.waitPod("two", "a done", func(p *corev1.Pod) bool { return terminated(p, "a") != nil })
	if p.Status.Phase != corev1.PodRunning || terminated(p, "a").ExitCode != 0 || !isRunning(p, "b") {
		t.Errorf("two at 10s: phase %s statuses %+v", p.Status.Phase, p.Status.ContainerStatuses)
	}
	e.step(5 * time.Second) // 15s: retry runs again
	e.waitPod("retry", "restarted", func(p *corev1.Pod) bool { return isRunning(p, "app") })
	e.step(5 * time.Second) // 20s
	p = e.waitPod("two", "failed", phase(corev1.PodFailed))
	if term := terminated(p, "b"); term == nil || term.ExitCode != 2 || !term.FinishedAt.Time.Equal(at(20*time.Second)) {
		t.Errorf("two: b = %+v", term)
	}
	e.step(10 * time.Second) // 30s
	p = e.waitPod("timed", "succeeded", phase(corev1.PodSucceeded))
	if term := terminated(p, "app"); term == nil || !term.FinishedAt.Time.Equal(at(30*time.Second)) {
		t.Errorf("timed: %+v", term)
	}
	if p := e.getPod("server"); !running(p) {
		t.Errorf("server: a bare image under Never ended after 30s: phase %s %+v", p.Status.Phase, p.Status.ContainerStatuses)
	}
}

// Init containers run one after the other for their run time; a sidecar
// must be started (its startup probe) before the next one runs, and turns
// ready; the regular containers run once all are done.
func TestInitContainersInOrder(t *testing.T) {
	e := startEnv(t, nodeagent.Options{})
	p := newPod("init", corev1.RestartPolicyAlways, "app=nginx")
	side := sidecar("side", "envoy")
	side.StartupProbe = &corev1.Probe{InitialDelaySeconds: 5, PeriodSeconds: 5, ProbeHandler: httpGet()}
	p.Spec.InitContainers = []corev1.Container{{Name: "first", Image: "busybox"}, side, {Name: "second", Image: "busybox"}}
	p.Annotations = map[string]string{nodeagent.AnnotationRunTime: "first=10s,second=10s"}
	e.createBound(p, "node-0")

	got := e.waitPod("init", "first running", func(p *corev1.Pod) bool { return isRunning(p, "first") })
	if got.Status.Phase != corev1.PodPending || waitingReason(got, "side") != "PodInitializing" ||
		waitingReason(got, "app") != "PodInitializing" {
		t.Errorf("at 0s: phase %s statuses %+v", got.Status.Phase, got.Status.InitContainerStatuses)
	}
	if c := podCondition(got, corev1.PodInitialized); c == nil || c.Status != corev1.ConditionFalse ||
		c.Reason != "ContainersNotInitialized" || c.Message != "containers with incomplete status: [first side second]" {
		t.Errorf("at 0s: Initialized = %+v", c)
	}
	e.step(10 * time.Second)
	got = e.waitPod("init", "side running", func(p *corev1.Pod) bool { return isRunning(p, "side") })
	if s := containerStatus(got, "side"); *s.Started || s.Ready || waitingReason(got, "second") != "PodInitializing" {
		t.Errorf("at 10s: side %+v second %+v", s, containerStatus(got, "second"))
	}
	if term := terminated(got, "first"); term == nil || term.Reason != "Completed" || !term.FinishedAt.Time.Equal(at(10*time.Second)) {
		t.Errorf("at 10s: first %+v", term)
	}
	// A completed init container reads as ready (the kubelet's prober
	// reports exit code 0 so), not started.
	if s := containerStatus(got, "first"); !s.Ready || *s.Started {
		t.Errorf("at 10s: first ready %v started %v, want ready and not started", s.Ready, *s.Started)
	}
	e.step(5 * time.Second)
	got = e.waitPod("init", "second running", func(p *corev1.Pod) bool { return isRunning(p, "second") })
	if s := containerStatus(got, "side"); !*s.Started || !s.Ready {
		t.Errorf("at 15s: side %+v", s)
	}
	e.step(10 * time.Second)
	got = e.waitPod("init", "running", running)
	if s := containerStatus(got, "app"); !s.State.Running.StartedAt.Time.Equal(at(25 * time.Second)) {
		t.Errorf("at 25s: app %+v", s)
	}
	if c := podCondition(got, corev1.PodInitialized); c.Status != corev1.ConditionTrue {
		t.Errorf("at 25s: Initialized = %+v", c)
	}
}

// A failing init container restarts with back-off under OnFailure
// (Init:CrashLoopBackOff) and fails the pod under Never (Init:Error).
func TestFailingInitContainer(t *testing.T) {
	e := startEnv(t, nodeagent.Options{})
	for _, policy := range []corev1.RestartPolicy{corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever} {
		p := newPod("init-"+strings.ToLower(string(policy)), policy, "app=nginx")
		p.Spec.InitContainers = []corev1.Container{{Name: "setup", Image: "busybox"}}
		p.Annotations = map[string]string{nodeagent.AnnotationExitCode: "setup=1"}
		e.createBound(p, "node-0")
	}
	got := e.waitPod("init-onfailure", "backing off", func(p *corev1.Pod) bool { return waitingReason(p, "setup") == "CrashLoopBackOff" })
	if s := containerStatus(got, "setup"); s.RestartCount != 1 || s.LastTerminationState.Terminated.Reason != "Error" ||
		got.Status.Phase != corev1.PodPending || waitingReason(got, "app") != "PodInitializing" {
		t.Errorf("OnFailure: phase %s setup %+v", got.Status.Phase, s)
	}
	got = e.waitPod("init-never", "failed", phase(corev1.PodFailed))
	if term := terminated(got, "setup"); term == nil || term.ExitCode != 1 || term.Reason != "Error" ||
		waitingReason(got, "app") != "PodInitializing" {
		t.Errorf("Never: statuses %+v %+v", got.Status.InitContainerStatuses, got.Status.ContainerStatuses)
	}
	if s := containerStatus(got, "setup"); s.Ready {
		t.Errorf("Never: a failed init container reads as ready")
	}
}

// activeDeadlineSeconds fails the pod as the kubelet does.
func TestActiveDeadline(t *testing.T) {
	e := startEnv(t, nodeagent.Options{})
	p := newPod("deadline", corev1.RestartPolicyAlways, "app=nginx")
	ads := int64(30)
	p.Spec.ActiveDeadlineSeconds = &ads
	e.createBound(p, "node-0")
	stuck := newPod("stuck", corev1.RestartPolicyAlways, "app=nginx")
	stuck.Spec.ActiveDeadlineSeconds = &ads
	stuck.Spec.Volumes = []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{
		ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "never"}}}}}
	e.createBound(stuck, "node-0")
	e.waitPod("stuck", "container creating", func(p *corev1.Pod) bool { return waitingReason(p, "app") == "ContainerCreating" })
	e.waitPod("deadline", "running", running)
	e.step(29 * time.Second)
	if got := e.getPod("deadline"); got.Status.Phase != corev1.PodRunning {
		t.Fatalf("at 29s: %s", got.Status.Phase)
	}
	e.step(time.Second)
	got := e.waitPod("deadline", "failed", phase(corev1.PodFailed))
	if got.Status.Reason != "DeadlineExceeded" || got.Status.Message != "Pod was active on the node longer than the specified deadline" {
		t.Errorf("reason %q message %q", got.Status.Reason, got.Status.Message)
	}
	if term := terminated(got, "app"); term == nil || term.ExitCode != 137 || !term.FinishedAt.Time.Equal(at(30*time.Second)) {
		t.Errorf("app %+v", term)
	}
	got = e.waitPod("stuck", "failed", phase(corev1.PodFailed))
	if got.Status.Reason != "DeadlineExceeded" || waitingReason(got, "app") != "ContainerCreating" {
		t.Errorf("stuck: reason %q statuses %+v", got.Status.Reason, got.Status.ContainerStatuses)
	}
	e.waitEvent("deadline", "DeadlineExceeded", "Pod was active on the node longer than the specified deadline")
	e.waitEvent("deadline", "Killing", "Stopping container app")
}

// activeDeadlineSeconds set on a running pod (the one change of it the API
// allows besides lowering it) fails the pod: at the new deadline when that
// is still ahead, at once when it is already past.
func TestActiveDeadlineSetOnRunningPod(t *testing.T) {
	e := startEnv(t, nodeagent.Options{})
	e.createBound(newPod("later", corev1.RestartPolicyAlways, "app=nginx"), "node-0")
	e.createBound(newPod("past", corev1.RestartPolicyAlways, "app=nginx"), "node-0")
	e.waitPod("later", "running", running)
	e.waitPod("past", "running", running)
	e.step(60 * time.Second)
	setDeadline := func(name string, seconds int64) {
		t.Helper()
		p := e.getPod(name)
		p.Spec.ActiveDeadlineSeconds = &seconds
		if _, err := e.pods.Namespace("default").Update(ctx(), p, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("set activeDeadlineSeconds of %s: %v", name, err)
		}
	}
	setDeadline("later", 90) // 30 s from now
	setDeadline("past", 5)   // 55 s ago
	got := e.waitPod("past", "failed", phase(corev1.PodFailed))
	if got.Status.Reason != "DeadlineExceeded" {
		t.Errorf("past: reason %q", got.Status.Reason)
	}
	if term := terminated(got, "app"); term == nil || term.ExitCode != 137 || !term.FinishedAt.Time.Equal(at(60*time.Second)) {
		t.Errorf("past: app %+v, want killed at 60s, when the node saw the deadline", term)
	}
	e.step(29 * time.Second)
	if got := e.getPod("later"); got.Status.Phase != corev1.PodRunning {
		t.Fatalf("later at 89s: %s", got.Status.Phase)
	}
	e.step(time.Second)
	got = e.waitPod("later", "failed", phase(corev1.PodFailed))
	if term := terminated(got, "app"); got.Status.Reason != "DeadlineExceeded" || term == nil || !term.FinishedAt.Time.Equal(at(90*time.Second)) {
		t.Errorf("later: reason %q app %+v, want killed at 90s", got.Status.Reason, term)
	}
}

// The kubelet's events for a container start: an image pull the first
// time the node sees the image, "already present" later, Created,
// Started, from source kubelet on the node, naming the container.
func TestStartEvents(t *testing.T) {
	e := startEnv(t, nodeagent.Options{})
	e.createBound(newPod("first", corev1.RestartPolicyAlways, "app=nginx:1.25"), "node-0")
	e.waitPod("first", "running", running)
	e.createBound(newPod("second", corev1.RestartPolicyAlways, "app=nginx:1.25"), "node-0")
	e.waitPod("second", "running", running)
	ev := e.waitEvent("first", "Pulling", `Pulling image "nginx:1.25"`)
	if ev.Source.Component != "kubelet" || ev.Source.Host != "node-0" || ev.InvolvedObject.FieldPath != "spec.containers{app}" ||
		ev.InvolvedObject.Kind != "Pod" || ev.Type != corev1.EventTypeNormal {
		t.Errorf("Pulling event %+v", ev)
	}
	e.waitEventMatch("first", "Pulled", func(m string) bool {
		var size uint64
		_, err := fmt.Sscanf(m, `Successfully pulled image "nginx:1.25" in 0s (0s including waiting). Image size: %d bytes.`, &size)
		return err == nil && size > 0
	})
	e.waitEvent("first", "Created", "Created container: app")
	e.waitEvent("first", "Started", "Started container app")
	e.waitEvent("second", "Pulled", `Container image "nginx:1.25" already present on machine and can be accessed by the pod`)
}

// DisableEvents writes no event.
func TestDisableEvents(t *testing.T) {
	e := startEnv(t, nodeagent.Options{DisableEvents: true})
	e.createBound(withCommand(newPod("quiet", corev1.RestartPolicyNever, "app=busybox")), "node-0")
	e.waitPod("quiet", "succeeded", phase(corev1.PodSucceeded))
	time.Sleep(500 * time.Millisecond) // events are written in the background
	l, err := forKind[*corev1.Event, *corev1.EventList](e, "events").List(ctx(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Items) != 0 {
		t.Errorf("events written: %+v", l.Items)
	}
}

// The node reports the generation it acted on in the status and in every
// condition, PodScheduled included (PodObservedGenerationTracking, GA in
// 1.35); a spec change bumps the generation and the node follows.
func TestObservedGeneration(t *testing.T) {
	e := startEnv(t, nodeagent.Options{})
	e.createBound(newPod("gen", corev1.RestartPolicyAlways, "app=nginx"), "node-0")
	observed := func(gen int64) func(*corev1.Pod) bool {
		return func(p *corev1.Pod) bool {
			if p.Generation != gen || p.Status.ObservedGeneration != gen || p.Status.Phase != corev1.PodRunning {
				return false
			}
			for _, c := range p.Status.Conditions {
				if c.ObservedGeneration != gen {
					return false
				}
			}
			return len(p.Status.Conditions) == 5
		}
	}
	e.waitPod("gen", "observed generation 1", observed(1))
	p := e.getPod("gen")
	p.Spec.Tolerations = []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
	if _, err := e.pods.Namespace("default").Update(ctx(), p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	got := e.waitPod("gen", "observed generation 2", observed(2))
	if c := podCondition(got, corev1.PodReady); c == nil || c.Status != corev1.ConditionTrue {
		t.Errorf("Ready after the update: %+v", c)
	}
}
