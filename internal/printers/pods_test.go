package printers

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// now is the fixed instant the tests render ages against.
var now = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func ago(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(-d)) }

func clock() time.Time { return now }

func waiting(reason string) corev1.ContainerState {
	return corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason}}
}

func terminated(reason string, code, signal int32) corev1.ContainerState {
	return corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: reason, ExitCode: code, Signal: signal}}
}

var running = corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}

func pod(phase corev1.PodPhase, statuses ...corev1.ContainerStatus) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", CreationTimestamp: ago(90 * time.Minute)},
		Spec:       corev1.PodSpec{},
		Status:     corev1.PodStatus{Phase: phase, ContainerStatuses: statuses},
	}
	for _, s := range statuses {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: s.Name})
	}
	if len(statuses) == 0 {
		p.Spec.Containers = []corev1.Container{{Name: "app"}}
	}
	return p
}

func TestPodStatusColumn(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	cases := map[string]struct {
		pod                     *corev1.Pod
		ready, status, restarts string
	}{
		"pending": {pod(corev1.PodPending), "0/1", "Pending", "0"},
		"creating": {pod(corev1.PodPending, corev1.ContainerStatus{Name: "app", State: waiting("ContainerCreating")}),
			"0/1", "ContainerCreating", "0"},
		"running":           {pod(corev1.PodRunning, corev1.ContainerStatus{Name: "app", Ready: true, State: running}), "1/1", "Running", "0"},
		"running not ready": {pod(corev1.PodRunning, corev1.ContainerStatus{Name: "app", State: running}), "0/1", "Running", "0"},
		"crash loop": {pod(corev1.PodRunning, corev1.ContainerStatus{Name: "app", State: waiting("CrashLoopBackOff"), RestartCount: 3,
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{FinishedAt: ago(2 * time.Minute)}}}),
			"0/1", "CrashLoopBackOff", "3 (2m ago)"},
		"completed": {pod(corev1.PodSucceeded, corev1.ContainerStatus{Name: "app", State: terminated("Completed", 0, 0)}),
			"0/1", "Completed", "0"},
		"exit code": {pod(corev1.PodFailed, corev1.ContainerStatus{Name: "app", State: terminated("", 2, 0)}), "0/1", "ExitCode:2", "0"},
		"signal":    {pod(corev1.PodFailed, corev1.ContainerStatus{Name: "app", State: terminated("", 137, 9)}), "0/1", "Signal:9", "0"},
		"first container wins": {pod(corev1.PodPending,
			corev1.ContainerStatus{Name: "a", State: waiting("ErrImagePull")},
			corev1.ContainerStatus{Name: "b", State: waiting("ContainerCreating")}), "0/2", "ErrImagePull", "0"},
		"completed beside running, not ready": {pod(corev1.PodRunning,
			corev1.ContainerStatus{Name: "a", State: terminated("Completed", 0, 0)},
			corev1.ContainerStatus{Name: "b", Ready: true, State: running}), "1/2", "NotReady", "0"},
		"evicted": {func() *corev1.Pod {
			p := pod(corev1.PodFailed)
			p.Status.Reason = "Evicted"
			return p
		}(), "0/1", "Evicted", "0"},
		"terminating": {func() *corev1.Pod {
			p := pod(corev1.PodRunning, corev1.ContainerStatus{Name: "app", Ready: true, State: running})
			p.DeletionTimestamp = new(ago(time.Second))
			return p
		}(), "1/1", "Terminating", "0"},
		"terminating after success": {func() *corev1.Pod {
			p := pod(corev1.PodSucceeded, corev1.ContainerStatus{Name: "app", State: terminated("Completed", 0, 0)})
			p.DeletionTimestamp = new(ago(time.Second))
			return p
		}(), "0/1", "Completed", "0"},
		"node lost": {func() *corev1.Pod {
			p := pod(corev1.PodRunning)
			p.Status.Reason = "NodeLost"
			p.DeletionTimestamp = new(ago(time.Second))
			return p
		}(), "0/1", "Unknown", "0"},
		"scheduling gated": {func() *corev1.Pod {
			p := pod(corev1.PodPending)
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Reason: "SchedulingGated"}}
			return p
		}(), "0/1", "SchedulingGated", "0"},
		"init waiting": {withInit(pod(corev1.PodPending), corev1.ContainerStatus{Name: "init", State: waiting("PodInitializing")}),
			"0/1", "Init:0/1", "0"},
		"init pull error": {withInit(pod(corev1.PodPending), corev1.ContainerStatus{Name: "init", State: waiting("ErrImagePull")}),
			"0/1", "Init:ErrImagePull", "0"},
		"init failed": {withInit(pod(corev1.PodPending), corev1.ContainerStatus{Name: "init", State: terminated("", 1, 0), RestartCount: 2}),
			"0/1", "Init:ExitCode:1", "2"},
		"init done": {withInit(pod(corev1.PodRunning, corev1.ContainerStatus{Name: "app", Ready: true, State: running}),
			corev1.ContainerStatus{Name: "init", State: terminated("Completed", 0, 0)}), "1/1", "Running", "0"},
		"sidecar": {func() *corev1.Pod {
			p := withInit(pod(corev1.PodRunning, corev1.ContainerStatus{Name: "app", Ready: true, State: running}),
				corev1.ContainerStatus{Name: "init", Ready: true, Started: new(true), State: running, RestartCount: 1})
			p.Spec.InitContainers[0].RestartPolicy = &always
			return p
		}(), "2/2", "Running", "1"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			cells, err := ForClock("", "Pod", clock).Cells(c.pod)
			if err != nil {
				t.Fatal(err)
			}
			if cells[1] != c.ready || cells[2] != c.status || cells[3] != c.restarts || cells[4] != "90m" {
				t.Errorf("cells %q, want ready %q status %q restarts %q age 90m", cells[:5], c.ready, c.status, c.restarts)
			}
		})
	}
}

func withInit(p *corev1.Pod, s corev1.ContainerStatus) *corev1.Pod {
	p.Spec.InitContainers = append(p.Spec.InitContainers, corev1.Container{Name: s.Name})
	p.Status.InitContainerStatuses = append(p.Status.InitContainerStatuses, s)
	return p
}

func TestPodWideColumns(t *testing.T) {
	tc := ForClock("", "Pod", clock)
	p := pod(corev1.PodPending)
	cells, _ := tc.Cells(p)
	if got := cells[5:]; got[0] != "<none>" || got[1] != "<none>" || got[2] != "<none>" || got[3] != "<none>" {
		t.Errorf("wide cells of an unscheduled pod: %q", got)
	}
	p.Spec.NodeName = "node-1"
	p.Status.PodIPs = []corev1.PodIP{{IP: "10.244.0.5"}}
	p.Status.NominatedNodeName = "node-2"
	p.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: "a"}, {ConditionType: "b"}}
	p.Status.Conditions = []corev1.PodCondition{{Type: "a", Status: corev1.ConditionTrue}, {Type: "b", Status: corev1.ConditionFalse}}
	cells, _ = tc.Cells(p)
	want := []interface{}{"10.244.0.5", "node-1", "node-2", "1/2"}
	for i, w := range want {
		if cells[5+i] != w {
			t.Errorf("wide cell %d = %v, want %v", i, cells[5+i], w)
		}
	}
	cols := tc.Columns()
	if len(cols) != len(cells) || cols[0].Format != "name" || cols[5].Priority != 1 || cols[4].Priority != 0 {
		t.Errorf("columns %+v", cols)
	}
}
