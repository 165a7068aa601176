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

// status is the pod status the simulation implies at now, over the pod's
// current one: fields the kubelet does not own (PodScheduled and other
// foreign conditions, qosClass, nominatedNodeName, …) are kept. now stamps
// condition transitions.
func (ps *podState) status(pod *corev1.Pod, now time.Time) corev1.PodStatus {
	st := *pod.Status.DeepCopy()
	start := mt(ps.admittedAt)
	st.Phase = ps.phase()
	st.StartTime = &start
	st.Reason, st.Message = ps.failReason, ps.failMsg
	st.HostIP, st.HostIPs = ps.node.ip, []corev1.HostIP{{IP: ps.node.ip}}
	if ps.ip != "" {
		st.PodIP, st.PodIPs = ps.ip, []corev1.PodIP{{IP: ps.ip}}
	}
	st.InitContainerStatuses = nil
	var incomplete, unready []string
	for _, c := range ps.inits {
		st.InitContainerStatuses = append(st.InitContainerStatuses, ps.containerStatus(c, now))
		switch {
		case c.kind == kindSidecar && !c.isStarted(now) && !ps.initialized,
			c.kind == kindInit && (c.term == nil || c.term.ExitCode != 0) && !ps.initialized:
			incomplete = append(incomplete, c.name)
		}
		if c.kind == kindSidecar && !c.isReady(now) {
			unready = append(unready, c.name)
		}
	}
	st.ContainerStatuses = make([]corev1.ContainerStatus, len(ps.containers))
	for i, c := range ps.containers {
		st.ContainerStatuses[i] = ps.containerStatus(c, now)
		if i < len(pod.Spec.Containers) {
			setResources(&st.ContainerStatuses[i], &pod.Spec.Containers[i].Resources)
		}
		if !c.isReady(now) {
			unready = append(unready, c.name)
		}
	}
	st.EphemeralContainerStatuses = ps.ephemeralStatuses()
	// The kubelet reports the generation of the spec it acted on, in the
	// status and in each condition it owns (PodObservedGenerationTracking,
	// GA and locked on since 1.35), PodScheduled included.
	st.ObservedGeneration = pod.Generation
	ps.setConditions(&st, incomplete, unready, mt(now))
	for i := range st.Conditions {
		if st.Conditions[i].Type == corev1.PodScheduled {
			st.Conditions[i].ObservedGeneration = pod.Generation
		}
	}
	return st
}

// setConditions sets the kubelet's pod conditions, worded as the kubelet
// words them.
func (ps *podState) setConditions(st *corev1.PodStatus, incomplete, unready []string, t metav1.Time) {
	terminal := isTerminal(st.Phase)
	setPodCondition(st, corev1.PodReadyToStartContainers, ps.started() && !terminal, "", "", t)
	initMsg := ""
	if len(incomplete) > 0 {
		initMsg = fmt.Sprintf("containers with incomplete status: [%s]", strings.Join(incomplete, " "))
	}
	setPodCondition(st, corev1.PodInitialized, len(incomplete) == 0, "ContainersNotInitialized", initMsg, t)
	reason, msg := "", ""
	switch {
	case st.Phase == corev1.PodSucceeded:
		reason = "PodCompleted"
	case len(unready) > 0:
		reason, msg = "ContainersNotReady", fmt.Sprintf("containers with unready status: [%s]", strings.Join(unready, " "))
	}
	ready := len(unready) == 0 && st.Phase == corev1.PodRunning
	setPodCondition(st, corev1.ContainersReady, ready, reason, msg, t)
	setPodCondition(st, corev1.PodReady, ready, reason, msg, t)
}

// containerStatus reports c at now.
func (ps *podState) containerStatus(c *ctrState, now time.Time) corev1.ContainerStatus {
	s := corev1.ContainerStatus{Name: c.name, Image: c.image, RestartCount: c.restarts, Started: ptrFalse()}
	if c.last != nil {
		s.LastTerminationState.Terminated = c.last.DeepCopy()
	}
	if !c.neverRan() {
		s.ImageID, s.ContainerID = imageID(c.image), ps.containerID(c)
	}
	switch {
	case c.running:
		s.Ready, s.Started = c.isReady(now), ptrBool(c.isStarted(now))
		s.State.Running = &corev1.ContainerStateRunning{StartedAt: mt(c.startedAt)}
	case c.term != nil:
		s.State.Terminated = c.term.DeepCopy()
		s.ContainerID = c.term.ContainerID
		// The kubelet's prober reports an init container (not a sidecar)
		// that completed with exit code 0 as ready.
		s.Ready = c.kind == kindInit && c.term.ExitCode == 0
	case c.pullWaiting(now) != nil:
		s.State.Waiting = c.pullWaiting(now)
	case c.configErr != "":
		s.State.Waiting = &corev1.ContainerStateWaiting{Reason: "CreateContainerConfigError", Message: c.configErr}
	case !c.restartAt.IsZero():
		s.State.Waiting = &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff",
			Message: fmt.Sprintf("back-off %s restarting failed container=%s pod=%s", c.backoff, c.name, ps.podRef())}
	case ps.hasInits:
		s.State.Waiting = &corev1.ContainerStateWaiting{Reason: "PodInitializing"}
	default:
		s.State.Waiting = &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}
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

// setPodCondition sets the condition of type typ, observed at the
// status's generation; its transition time is kept while the status does
// not change.
func setPodCondition(st *corev1.PodStatus, typ corev1.PodConditionType, ok bool, reason, msg string, now metav1.Time) {
	c := corev1.PodCondition{Type: typ, Status: corev1.ConditionFalse, Reason: reason, Message: msg, LastTransitionTime: now,
		ObservedGeneration: st.ObservedGeneration}
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

func ptrTrue() *bool       { b := true; return &b }
func ptrFalse() *bool      { b := false; return &b }
func ptrBool(b bool) *bool { return &b }
