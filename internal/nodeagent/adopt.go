package nodeagent

import (
	"time"

	corev1 "k8s.io/api/core/v1"
)

// startSandbox makes the pod's sandbox at now: from then on its containers
// run (init containers first).
func (ps *podState) startSandbox(now time.Time) {
	ps.sandboxAt = now.Truncate(timeGranularity)
	if len(ps.inits) == 0 {
		ps.initialized, ps.initDoneAt = true, ps.sandboxAt
	}
}

// adopt takes over a pod whose sandbox an earlier incarnation of the agent
// made, from its status: each container's state (a running one keeps its
// start, so its scheduled end and probe times are those it had; one in
// back-off restarts when its back-off, counted from its last exit, ends).
// The logs are rebuilt from it too: the latest run and, from lastState,
// the one before. No events are recorded.
func (ps *podState) adopt(pod *corev1.Pod, now time.Time, base time.Duration) {
	ps.sandboxAt = ps.admittedAt
	if len(ps.inits) == 0 {
		ps.initialized, ps.initDoneAt = true, ps.sandboxAt
	}
	ps.ip = pod.Status.PodIP
	adoptAll(ps.inits, pod.Status.InitContainerStatuses, now, base)
	adoptAll(ps.containers, pod.Status.ContainerStatuses, now, base)
	if !ps.initialized {
		for _, c := range ps.containers {
			if !c.neverRan() { // the main containers ran: the inits were done
				ps.initialized, ps.initDoneAt = true, c.startedAt
			}
		}
	}
}

func adoptAll(cs []*ctrState, statuses []corev1.ContainerStatus, now time.Time, base time.Duration) {
	byName := map[string]*corev1.ContainerStatus{}
	for i := range statuses {
		byName[statuses[i].Name] = &statuses[i]
	}
	for _, c := range cs {
		if s := byName[c.name]; s != nil {
			c.adopt(s, now, base)
		}
		c.rebuildLog()
	}
}

// adopt rebuilds c from its reported status (at now).
func (c *ctrState) adopt(s *corev1.ContainerStatus, now time.Time, base time.Duration) {
	c.restarts = s.RestartCount
	c.last = s.LastTerminationState.Terminated.DeepCopy()
	switch {
	case s.State.Terminated != nil:
		c.term, c.startedAt = s.State.Terminated.DeepCopy(), s.State.Terminated.StartedAt.Time
	case s.State.Running != nil:
		c.schedule(s.State.Running.StartedAt.Time)
	case s.State.Waiting != nil && c.last != nil:
		// backing off (or waiting for its ConfigMap) after a run
		c.backoff = restartBackoff(base, c.restarts)
		c.restartAt = c.last.FinishedAt.Add(c.backoff)
		c.startedAt = c.last.StartedAt.Time
		if s.State.Waiting.Reason == "CreateContainerConfigError" {
			c.configErr = s.State.Waiting.Message
		}
	case s.State.Waiting != nil && s.State.Waiting.Reason == "CreateContainerConfigError":
		c.configErr = s.State.Waiting.Message
	case s.State.Waiting != nil:
		c.pull = adoptPull(c.image, s.State.Waiting, now)
	}
}

// rebuildLog makes c's log what its adopted state tells: the previous run
// from lastState, the latest from the current state.
func (c *ctrState) rebuildLog() {
	c.log.endAll()
	c.log = logBook{}
	restarts := c.restarts
	if c.last != nil {
		c.restarts = max(restarts-1, 0)
		c.logStart(c.last.StartedAt.Time)
		c.logEnd(c.last, c.last.FinishedAt.Time)
		c.restarts = restarts
	}
	switch {
	case c.term != nil:
		c.logStart(c.term.StartedAt.Time)
		c.logEnd(c.term, c.term.FinishedAt.Time)
	case c.running:
		c.logStart(c.startedAt)
	}
}
