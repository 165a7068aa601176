package nodeagent_test

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"k8s.io/utils/ptr"

	"github.com/setpoint-dev/setpoint/internal/nodeagent"
	"github.com/setpoint-dev/setpoint/internal/testserver"
)

// CrashContainer follows the restart policy: Always and OnFailure (non-zero
// exit) restart after the back-off with restartCount 1; OnFailure with exit
// 0 and Never leave the container terminated and the pod terminal.
func TestCrashContainer(t *testing.T) {
	e := startEnv(t, nodeagent.Options{})
	cases := []struct {
		name    string
		policy  corev1.RestartPolicy
		code    int32
		restart bool
		phase   corev1.PodPhase
	}{
		{"always", corev1.RestartPolicyAlways, 0, true, corev1.PodRunning},
		{"onfailure", corev1.RestartPolicyOnFailure, 2, true, corev1.PodRunning},
		{"onfailure-ok", corev1.RestartPolicyOnFailure, 0, false, corev1.PodSucceeded},
		{"never", corev1.RestartPolicyNever, 3, false, corev1.PodFailed},
	}
	for _, c := range cases {
		p := newPod(c.name, c.policy, "app=nginx")
		p.Annotations = map[string]string{nodeagent.AnnotationRunTime: "1h"} // runs until crashed
		e.createBound(p, "node-0")
	}
	for _, c := range cases {
		e.waitPod(c.name, "running", running)
		if err := e.agent.CrashContainer("default", c.name, "app", c.code); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range cases {
		p := e.waitPod(c.name, "crashed", func(p *corev1.Pod) bool { return !podReady(p) })
		cs := p.Status.ContainerStatuses[0]
		if p.Status.Phase != c.phase {
			t.Errorf("%s: phase %s, want %s", c.name, p.Status.Phase, c.phase)
		}
		if c.restart {
			if cs.RestartCount != 1 || cs.LastTerminationState.Terminated == nil ||
				cs.LastTerminationState.Terminated.ExitCode != c.code || cs.State.Waiting == nil ||
				cs.State.Waiting.Reason != "CrashLoopBackOff" {
				t.Errorf("%s: status after crash = %+v", c.name, cs)
			}
		} else if cs.RestartCount != 0 || cs.State.Terminated == nil || cs.State.Terminated.ExitCode != c.code {
			t.Errorf("%s: status after crash = %+v", c.name, cs)
		}
	}
	e.clk.Step(10 * time.Second)
	for _, c := range cases {
		if !c.restart {
			continue
		}
		p := e.waitPod(c.name, "restarted", running)
		cs := p.Status.ContainerStatuses[0]
		if cs.RestartCount != 1 || cs.State.Running == nil || !cs.State.Running.StartedAt.Time.Equal(epoch.Add(10*time.Second)) {
			t.Errorf("%s: status after restart = %+v", c.name, cs)
		}
	}
	if err := e.agent.CrashContainer("default", "always", "nope", 1); err == nil {
		t.Error("crash of an unknown container succeeded")
	}
}

// The crash-after annotation crashes the first container after each
// start: under Never the pod fails with exit code 1; under Always it keeps
// restarting with a doubling back-off.
func TestCrashAfterAnnotation(t *testing.T) {
	e := startEnv(t, nodeagent.Options{})
	never := newPod("never", corev1.RestartPolicyNever, "app=nginx")
	never.Annotations = map[string]string{nodeagent.AnnotationCrashAfter: "5s", nodeagent.AnnotationRunTime: "1h"}
	always := newPod("always", corev1.RestartPolicyAlways, "app=nginx")
	always.Annotations = map[string]string{nodeagent.AnnotationCrashAfter: "5s", nodeagent.AnnotationCrashExitCode: "7"}
	e.createBound(never, "node-0")
	e.createBound(always, "node-0")
	e.waitPod("never", "running", running)
	e.waitPod("always", "running", running)
	e.clk.Step(5 * time.Second)
	p := e.waitPod("never", "failed", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodFailed })
	if term := p.Status.ContainerStatuses[0].State.Terminated; term == nil || term.ExitCode != 1 ||
		!term.FinishedAt.Time.Equal(epoch.Add(5*time.Second)) {
		t.Errorf("never: terminated = %+v", term)
	}
	// always: crash at 5s, back-off 10s, run at 15s, crash at 20s, back-off 20s, run at 40s.
	e.stepUntil("second restart", 5*time.Second, func() bool {
		p := e.getPod("always")
		return p.Status.ContainerStatuses[0].RestartCount == 2 && running(p)
	})
	cs := e.getPod("always").Status.ContainerStatuses[0]
	if !cs.State.Running.StartedAt.Time.Equal(epoch.Add(40*time.Second)) || cs.LastTerminationState.Terminated.ExitCode != 7 {
		t.Errorf("always: status = %+v", cs)
	}
}

// A node whose heartbeat stopped renews no Lease and starts no pod; once
// resumed, it renews at once and runs the pod.
func TestStopAndResumeHeartbeat(t *testing.T) {
	e := startEnv(t, nodeagent.Options{Count: 2})
	if !e.agent.StopHeartbeat("node-1") || e.agent.StopHeartbeat("node-9") {
		t.Fatal("StopHeartbeat: wrong answer for known/unknown node")
	}
	e.createBound(newPod("stuck", corev1.RestartPolicyAlways, "app=nginx"), "node-1")
	e.createBound(newPod("fine", corev1.RestartPolicyAlways, "app=nginx"), "node-0")
	e.waitPod("fine", "running", running)
	e.clk.Step(10 * time.Second)
	eventually(t, "node-0 lease renewed", func() bool {
		l, err := e.lease.Get(ctx(), "node-0", metav1.GetOptions{})
		return err == nil && l.Spec.RenewTime.Time.Equal(epoch.Add(10*time.Second))
	})
	l, err := e.lease.Get(ctx(), "node-1", metav1.GetOptions{})
	if err != nil || !l.Spec.RenewTime.Time.Equal(epoch) {
		t.Fatalf("dead node's lease renewed: %+v %v", l, err)
	}
	if p := e.getPod("stuck"); p.Status.Phase != corev1.PodPending {
		t.Fatalf("pod on dead node is %s", p.Status.Phase)
	}
	e.agent.ResumeHeartbeat("node-1")
	eventually(t, "node-1 lease renewed", func() bool {
		l, err := e.lease.Get(ctx(), "node-1", metav1.GetOptions{})
		return err == nil && l.Spec.RenewTime.Time.Equal(epoch.Add(10*time.Second))
	})
	e.waitPod("stuck", "running", running)
}

// A failed pod sync retries on wall-clock time, never waiting for the
// simulated clock: on a node whose pod CIDR holds one address, a second
// pod cannot start (no free IP) until the first is deleted, and then it
// starts while the fake clock stands still.
func TestFailedSyncRetriesOnWallClock(t *testing.T) {
	e := newEnv(t, testserver.Start(t, testserver.Options{}))
	tiny := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-0"},
		Spec: corev1.NodeSpec{PodCIDR: "10.9.0.0/30", PodCIDRs: []string{"10.9.0.0/30"}}}
	if _, err := e.nodes.Create(ctx(), tiny, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.startAgent(nodeagent.Options{})
	e.createBound(newPod("first", corev1.RestartPolicyAlways, "app=nginx"), "node-0")
	e.waitPod("first", "running", running)
	e.createBound(newPod("second", corev1.RestartPolicyAlways, "app=nginx"), "node-0")
	// Let the second pod's sync fail at least once before freeing the IP.
	time.Sleep(100 * time.Millisecond)
	if p := e.getPod("second"); p.Status.PodIP != "" {
		t.Fatalf("second pod got %s in a full pod CIDR", p.Status.PodIP)
	}
	if err := e.pods.Namespace("default").Delete(ctx(), "first",
		metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	p := e.waitPod("second", "running", running)
	if p.Status.PodIP != "10.9.0.2" {
		t.Errorf("second pod IP = %q, want 10.9.0.2", p.Status.PodIP)
	}
}
