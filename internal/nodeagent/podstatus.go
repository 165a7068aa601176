package nodeagent

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// status is the pod status the simulation implies, over the pod's current
// one: fields the kubelet does not own (PodScheduled and other foreign
// conditions, qosClass, nominatedNodeName, …) are kept. now stamps
// condition transitions.
func (ps *podState) status(pod *corev1.Pod, now time.Time) corev1.PodStatus {
	st := *pod.Status.DeepCopy()
	start := mt(ps.startedAt)
	st.Phase = ps.phase()
	st.StartTime = &start
	st.HostIP, st.HostIPs = ps.node.ip, []corev1.HostIP{{IP: ps.node.ip}}
	if ps.ip != "" {
		st.PodIP, st.PodIPs = ps.ip, []corev1.PodIP{{IP: ps.ip}}
	}
	st.InitContainerStatuses = ps.initStatuses(pod)
	st.ContainerStatuses = make([]corev1.ContainerStatus, len(ps.containers))
	var unready []string
	for i, c := range ps.containers {
		st.ContainerStatuses[i] = ps.containerStatus(c)
		if i < len(pod.Spec.Containers) {
			setResources(&st.ContainerStatuses[i], &pod.Spec.Containers[i].Resources)
		}
		if !c.running {
			unready = append(unready, c.name)
		}
	}
	st.EphemeralContainerStatuses = ps.ephemeralStatuses()
	t := mt(now)
	terminal := st.Phase != corev1.PodRunning
	setPodCondition(&st, corev1.PodReadyToStartContainers, !terminal, "", "", t)
	setPodCondition(&st, corev1.PodInitialized, true, "", "", t)
	reason, msg := "", ""
	switch {
	case st.Phase == corev1.PodSucceeded:
		reason = "PodCompleted"
	case len(unready) > 0:
		reason, msg = "ContainersNotReady", fmt.Sprintf("containers with unready status: [%s]", strings.Join(unready, " "))
	}
	setPodCondition(&st, corev1.ContainersReady, len(unready) == 0, reason, msg, t)
	setPodCondition(&st, corev1.PodReady, len(unready) == 0, reason, msg, t)
	return st
}

// initStatuses reports regular init containers as completed at the pod's
// start and restartable (sidecar) ones as running.
func (ps *podState) initStatuses(pod *corev1.Pod) []corev1.ContainerStatus {
	if len(pod.Spec.InitContainers) == 0 {
		return nil
	}
	start := mt(ps.startedAt)
	out := make([]corev1.ContainerStatus, len(pod.Spec.InitContainers))
	for i, ic := range pod.Spec.InitContainers {
		c := &ctrState{name: ic.Name, image: ic.Image, startedAt: ps.startedAt}
		s := corev1.ContainerStatus{Name: ic.Name, Image: ic.Image, ImageID: imageID(ic.Image), ContainerID: ps.containerID(c)}
		if ic.RestartPolicy != nil && *ic.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			s.Ready, s.Started = true, ptrTrue()
			s.State.Running = &corev1.ContainerStateRunning{StartedAt: start}
		} else {
			s.Started = ptrFalse()
			s.State.Terminated = &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed",
				StartedAt: start, FinishedAt: start, ContainerID: s.ContainerID}
		}
		out[i] = s
	}
	return out
}

func (ps *podState) containerStatus(c *ctrState) corev1.ContainerStatus {
	s := corev1.ContainerStatus{Name: c.name, Image: c.image, ImageID: imageID(c.image),
		ContainerID: ps.containerID(c), RestartCount: c.restarts, Ready: c.running, Started: ptrFalse()}
	if c.last != nil {
		s.LastTerminationState.Terminated = c.last.DeepCopy()
	}
	switch {
	case c.running:
		s.Started = ptrTrue()
		s.State.Running = &corev1.ContainerStateRunning{StartedAt: mt(c.startedAt)}
	case c.term != nil:
		s.State.Terminated = c.term.DeepCopy()
	default:
		s.State.Waiting = &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff",
			Message: fmt.Sprintf("back-off %s restarting failed container=%s", c.backoff, c.name)}
	}
	return s
}

// ephemeralStatuses reports the ephemeral containers: running, or
// terminated once killed.
func (ps *podState) ephemeralStatuses() []corev1.ContainerStatus {
	if len(ps.ephemeral) == 0 {
		return nil
	}
	out := make([]corev1.ContainerStatus, len(ps.ephemeral))
	for i, c := range ps.ephemeral {
		out[i] = corev1.ContainerStatus{Name: c.name, Image: c.image, ImageID: imageID(c.image),
			ContainerID: ps.containerID(c), Ready: false, Started: ptrTrue(),
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: mt(c.startedAt)}}}
	}
	return out
}

// setResources reports the container's cpu and memory as applied: the
// simulated node resizes in place at once, so status follows the spec
// (and the API server allows pods/resize, which needs them reported).
func setResources(s *corev1.ContainerStatus, spec *corev1.ResourceRequirements) {
	pick := func(l corev1.ResourceList) corev1.ResourceList {
		var out corev1.ResourceList
		for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			if q, ok := l[name]; ok {
				if out == nil {
					out = corev1.ResourceList{}
				}
				out[name] = q.DeepCopy()
			}
		}
		return out
	}
	s.Resources = &corev1.ResourceRequirements{Requests: pick(spec.Requests), Limits: pick(spec.Limits)}
	s.AllocatedResources = pick(spec.Requests)
}

// imageID is a stable fake digest of the image reference.
func imageID(image string) string {
	h := sha256.Sum256([]byte(image))
	ref := image
	if i := strings.LastIndexAny(ref, ":@"); i > strings.LastIndex(ref, "/") {
		ref = ref[:i]
	}
	return ref + "@sha256:" + hex.EncodeToString(h[:])
}

// setPodCondition sets the condition of type typ; its transition time is
// kept while the status does not change.
func setPodCondition(st *corev1.PodStatus, typ corev1.PodConditionType, ok bool, reason, msg string, now metav1.Time) {
	c := corev1.PodCondition{Type: typ, Status: corev1.ConditionFalse, Reason: reason, Message: msg, LastTransitionTime: now}
	if ok {
		c.Status, c.Reason, c.Message = corev1.ConditionTrue, "", ""
	}
	for i := range st.Conditions {
		if st.Conditions[i].Type == typ {
			if st.Conditions[i].Status == c.Status {
				c.LastTransitionTime = st.Conditions[i].LastTransitionTime
				c.LastProbeTime = st.Conditions[i].LastProbeTime
			}
			st.Conditions[i] = c
			return
		}
	}
	st.Conditions = append(st.Conditions, c)
}

// statusEqual reports whether writing want would change nothing.
func statusEqual(cur, want *corev1.PodStatus) bool {
	return apiequality.Semantic.DeepEqual(cur, want)
}

// mt is t as the API stores it (whole seconds), so that a status rebuilt
// from the same state compares equal to the one read back.
func mt(t time.Time) metav1.Time { return metav1.NewTime(t.Truncate(timeGranularity)) }

func ptrTrue() *bool  { b := true; return &b }
func ptrFalse() *bool { b := false; return &b }
