package printers

import (
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

var podColumns = []metav1.TableColumnDefinition{
	nameColumn(0),
	column("Ready", "string", "The aggregate readiness state of this pod for accepting traffic."),
	column("Status", "string", "The aggregate status of the containers in this pod."),
	column("Restarts", "string", "The number of times the containers in this pod have been restarted, and when the last one was."),
	ageColumn,
	wide("IP", "string", "The IP address allocated to the pod."),
	wide("Node", "string", "The node the pod is scheduled to."),
	wide("Nominated Node", "string", "The node the scheduler nominated for the pod while preempting."),
	wide("Readiness Gates", "string", "Readiness gates that are true, of those the pod declares."),
}

// nodeUnreachablePodReason is the status reason of pods on a lost node.
const nodeUnreachablePodReason = "NodeLost"

func podCells(p *corev1.Pod, now time.Time) []interface{} {
	st := derivePodStatus(p)
	restarts := strconv.Itoa(st.restarts)
	if st.restarts != 0 && !st.lastRestart.IsZero() {
		restarts = fmt.Sprintf("%d (%s ago)", st.restarts, age(st.lastRestart, now))
	}
	ip := p.Status.PodIP
	if len(p.Status.PodIPs) > 0 {
		ip = p.Status.PodIPs[0].IP
	}
	return []interface{}{
		p.Name, fmt.Sprintf("%d/%d", st.ready, st.total), st.reason, restarts, age(p.CreationTimestamp, now),
		orNone(ip), orNone(p.Spec.NodeName), orNone(p.Status.NominatedNodeName), readinessGates(p),
	}
}

// podStatus is what `kubectl get pods` shows of a pod's state.
type podStatus struct {
	ready, total int
	// reason is the STATUS column: the phase, or a more telling reason
	// (ContainerCreating, CrashLoopBackOff, Completed, Init:0/1,
	// Terminating, ...).
	reason      string
	restarts    int
	lastRestart metav1.Time
}

// derivePodStatus computes the STATUS, READY and RESTARTS columns as
// kubectl does: init containers first (a pod still initializing shows
// Init:...), then the regular containers from last to first, so that the
// first container's waiting or terminated reason wins.
func derivePodStatus(p *corev1.Pod) podStatus {
	st := podStatus{total: len(p.Spec.Containers), reason: string(p.Status.Phase)}
	if p.Status.Reason != "" {
		st.reason = p.Status.Reason
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Reason == corev1.PodReasonSchedulingGated {
			st.reason = corev1.PodReasonSchedulingGated
		}
	}
	sidecars := map[string]bool{}
	for _, c := range p.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			sidecars[c.Name] = true
			st.total++
		}
	}
	initializing, sidecarRestarts, sidecarLast := initStatus(p, sidecars, &st)
	if !initializing || podInitialized(p) {
		st.restarts, st.lastRestart = sidecarRestarts, sidecarLast
		containerStatus(p, &st)
	}
	if p.DeletionTimestamp != nil {
		switch {
		case p.Status.Reason == nodeUnreachablePodReason:
			st.reason = "Unknown"
		case p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed:
			st.reason = "Terminating"
		}
	}
	return st
}

// initStatus walks the init container statuses and reports whether the pod
// is still initializing, and the restarts of its sidecars.
func initStatus(p *corev1.Pod, sidecars map[string]bool, st *podStatus) (bool, int, metav1.Time) {
	var sidecarRestarts int
	var sidecarLast metav1.Time
	for i, c := range p.Status.InitContainerStatuses {
		st.restarts += int(c.RestartCount)
		noteRestart(&st.lastRestart, c)
		if sidecars[c.Name] {
			sidecarRestarts += int(c.RestartCount)
			noteRestart(&sidecarLast, c)
		}
		switch {
		case c.State.Terminated != nil && c.State.Terminated.ExitCode == 0:
			continue
		case sidecars[c.Name] && c.Started != nil && *c.Started:
			if c.Ready {
				st.ready++
			}
			continue
		case c.State.Terminated != nil:
			st.reason = "Init:" + terminatedReason(c.State.Terminated)
		case c.State.Waiting != nil && c.State.Waiting.Reason != "" && c.State.Waiting.Reason != "PodInitializing":
			st.reason = "Init:" + c.State.Waiting.Reason
		default:
			st.reason = fmt.Sprintf("Init:%d/%d", i, len(p.Spec.InitContainers))
		}
		return true, sidecarRestarts, sidecarLast
	}
	return false, sidecarRestarts, sidecarLast
}

// containerStatus folds the regular container statuses into st.
func containerStatus(p *corev1.Pod, st *podStatus) {
	hasRunning, errorReason := false, ""
	for i := len(p.Status.ContainerStatuses) - 1; i >= 0; i-- {
		c := p.Status.ContainerStatuses[i]
		st.restarts += int(c.RestartCount)
		noteRestart(&st.lastRestart, c)
		switch {
		case c.State.Waiting != nil && c.State.Waiting.Reason != "":
			st.reason = c.State.Waiting.Reason
		case c.State.Terminated != nil:
			st.reason = terminatedReason(c.State.Terminated)
			if c.State.Terminated.ExitCode != 0 {
				errorReason = st.reason
			}
		case c.Ready && c.State.Running != nil:
			hasRunning = true
			st.ready++
		}
	}
	// A pod whose first container completed shows Running while another
	// runs and the pod is ready, else the failure of another, else
	// NotReady while another runs.
	if st.reason == "Completed" {
		switch {
		case hasRunning && podCondition(p, corev1.PodReady):
			st.reason = "Running"
		case errorReason != "":
			st.reason = errorReason
		case hasRunning:
			st.reason = "NotReady"
		}
	}
}

// podTable adds row conditions to the pod table.
type podTable struct{ *table[*corev1.Pod] }

func (podTable) RowConditions(obj runtime.Object) []metav1.TableRowCondition {
	if p, ok := obj.(*corev1.Pod); ok {
		return podRowConditions(p)
	}
	return nil
}

// podRowConditions mark the rows of pods that have finished, as
// kube-apiserver does (registry.RowConditioner).
func podRowConditions(p *corev1.Pod) []metav1.TableRowCondition {
	switch p.Status.Phase {
	case corev1.PodSucceeded:
		return []metav1.TableRowCondition{{Type: metav1.RowCompleted, Status: metav1.ConditionTrue,
			Reason: string(corev1.PodSucceeded), Message: "The pod has completed successfully."}}
	case corev1.PodFailed:
		return []metav1.TableRowCondition{{Type: metav1.RowCompleted, Status: metav1.ConditionTrue,
			Reason: string(corev1.PodFailed), Message: "The pod failed."}}
	}
	return nil
}

func terminatedReason(t *corev1.ContainerStateTerminated) string {
	switch {
	case t.Reason != "":
		return t.Reason
	case t.Signal != 0:
		return fmt.Sprintf("Signal:%d", t.Signal)
	default:
		return fmt.Sprintf("ExitCode:%d", t.ExitCode)
	}
}

// noteRestart keeps in last the latest time c last terminated.
func noteRestart(last *metav1.Time, c corev1.ContainerStatus) {
	if t := c.LastTerminationState.Terminated; t != nil && last.Before(&t.FinishedAt) {
		*last = t.FinishedAt
	}
}

func podInitialized(p *corev1.Pod) bool { return podCondition(p, corev1.PodInitialized) }

func podCondition(p *corev1.Pod, t corev1.PodConditionType) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == t && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// readinessGates renders "true/declared" readiness gates, or <none>.
func readinessGates(p *corev1.Pod) string {
	if len(p.Spec.ReadinessGates) == 0 {
		return "<none>"
	}
	n := 0
	for _, g := range p.Spec.ReadinessGates {
		if podCondition(p, g.ConditionType) {
			n++
		}
	}
	return fmt.Sprintf("%d/%d", n, len(p.Spec.ReadinessGates))
}
