package nodeagent

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// envChecker tells why a container's environment cannot be built (a
// missing ConfigMap, Secret or key), "" when it can.
type envChecker func(spec *corev1.Container) string

// runtimeCtx carries what advancing a pod needs besides its state.
type runtimeCtx struct {
	now     time.Time
	backoff time.Duration
	env     envChecker
	images  imagePolicy
}

// run starts a new run of c at "at" unless its image cannot be pulled
// (pull.go; a retry waits for the image back-off) or its environment
// cannot be built. It reports whether it started or tried a pull.
func (ps *podState) run(c *ctrState, at time.Time, rc *runtimeCtx) bool {
	if c.backingOff(rc.now) {
		return false
	}
	if c.pull.err != "" {
		at = maxTime(at, c.pull.retryAt) // the retry is due when the back-off ends
	}
	if !ps.pull(c, at, rc) {
		return !c.pull.never
	}
	if msg := rc.env(c.spec); msg != "" {
		if msg != c.configErr {
			ps.event(c, corev1.EventTypeWarning, "Failed", "Error: "+msg)
		}
		c.configErr = msg
		return false
	}
	c.configErr = ""
	ps.pullEvents(c)
	ps.event(c, corev1.EventTypeNormal, "Created", "Created container: "+c.name)
	ps.event(c, corev1.EventTypeNormal, "Started", "Started container "+c.name)
	c.schedule(at)
	c.logStart(at)
	if c.knobs.notReady && c.spec.ReadinessProbe != nil {
		ps.event(c, corev1.EventTypeWarning, "Unhealthy", "Readiness probe failed: "+probeFailure(c.spec.ReadinessProbe, ps.ip))
	}
	return true
}

// schedule sets up the run of c that started at: probe times and its end,
// the earliest of its run time, its crash and its liveness kill.
func (c *ctrState) schedule(at time.Time) {
	c.running, c.startedAt, c.restartAt, c.configErr = true, at, time.Time{}, ""
	c.probes = computeProbes(c.spec, c.knobs)
	c.exitAt, c.exitCode, c.byLiveness = time.Time{}, 0, false
	consider := func(d time.Duration, code int32, liveness bool) {
		if t := at.Add(d); c.exitAt.IsZero() || t.Before(c.exitAt) {
			c.exitAt, c.exitCode, c.byLiveness = t, code, liveness
		}
	}
	if c.knobs.finite {
		consider(c.knobs.runTime, c.knobs.exitCode, false)
	}
	if c.knobs.crashAfter > 0 {
		consider(c.knobs.crashAfter, c.knobs.crashExit, false)
	}
	if c.probes.livenessKill >= 0 {
		consider(c.probes.livenessKill, exitKilled, true)
	}
}

// restarts reports whether a container that exited with code is run
// again, per its kind and the pod's restartPolicy.
func (ps *podState) restarts(c *ctrState, code int32) bool {
	switch c.kind {
	case kindSidecar:
		return true
	case kindInit:
		return code != 0 && ps.policy != corev1.RestartPolicyNever
	case kindRegular:
		return ps.policy == corev1.RestartPolicyAlways || (ps.policy == corev1.RestartPolicyOnFailure && code != 0)
	}
	return false
}

// end ends c's run at "at" with the exit code; per the restart policy it
// restarts after the back-off or stays terminated.
func (ps *podState) end(c *ctrState, code int32, at time.Time, base time.Duration) {
	reason := reasonError
	if code == 0 {
		reason = reasonCompleted
	}
	t := &corev1.ContainerStateTerminated{ExitCode: code, Reason: reason, ContainerID: ps.containerID(c),
		StartedAt: mt(c.startedAt), FinishedAt: mt(at)}
	if c.byLiveness {
		ps.event(c, corev1.EventTypeWarning, "Unhealthy", "Liveness probe failed: "+probeFailure(c.spec.LivenessProbe, ps.ip))
		ps.event(c, corev1.EventTypeNormal, "Killing", fmt.Sprintf("Container %s failed liveness probe, will be restarted", c.name))
	}
	c.running, c.exitAt, c.byLiveness = false, time.Time{}, false
	c.logEnd(t, at)
	if !ps.restarts(c, code) {
		c.term = t
		return
	}
	c.last = t
	c.restarts++
	c.backoff = restartBackoff(base, c.restarts)
	c.restartAt = at.Add(c.backoff)
	ps.event(c, corev1.EventTypeWarning, "BackOff",
		fmt.Sprintf("Back-off restarting failed container %s in pod %s", c.name, ps.podRef()))
}

// podRef is the pod as the kubelet names it in messages: name_namespace(uid).
func (ps *podState) podRef() string { return fmt.Sprintf("%s_%s(%s)", ps.name, ps.ns, ps.uid) }

// advance applies every event due at now (injected and scheduled exits,
// restarts after back-off, init containers completing, the active
// deadline) and returns the time of the next scheduled event, zero if
// none. Events chain at the times they were due, not at now, so the
// result does not depend on when the agent looked.
func (ps *podState) advance(rc *runtimeCtx) time.Time {
	now := rc.now
	for _, c := range append(append([]*ctrState(nil), ps.inits...), ps.containers...) {
		if code, ok := ps.pending[c.name]; ok {
			delete(ps.pending, c.name)
			if c.running {
				c.byLiveness = false // crashed, not killed by its probe
				ps.end(c, code, now, rc.backoff)
			}
		}
	}
	due := *rc
	overdue := !ps.deadline.IsZero() && !now.Before(ps.deadline) && ps.failReason == ""
	if overdue {
		due.now = ps.deadline // nothing after the deadline happens
	}
	for range maxAdvanceRounds {
		if ps.failReason != "" || !ps.step(&due) {
			break
		}
	}
	if overdue && !isTerminal(ps.phase()) {
		ps.failDeadline()
	}
	return ps.next(now)
}

// step makes one round of due transitions; it reports whether anything
// changed.
func (ps *podState) step(rc *runtimeCtx) bool {
	now, changed := rc.now, false
	for _, c := range append(append([]*ctrState(nil), ps.inits...), ps.containers...) {
		changed = ps.stepPull(c, now) || changed
		if c.running && !c.exitAt.IsZero() && !now.Before(c.exitAt) {
			ps.end(c, c.exitCode, c.exitAt, rc.backoff)
			changed = true
		}
		if !c.running && !c.restartAt.IsZero() && !now.Before(c.restartAt) {
			at := c.restartAt
			if c.configErr != "" {
				at = now // it waited for its ConfigMap or Secret
			}
			changed = ps.run(c, at, rc) || changed
		}
	}
	if !ps.initialized {
		changed = ps.stepInits(rc) || changed
	}
	if ps.initialized {
		for _, c := range ps.containers {
			if c.neverRan() {
				at := ps.initDoneAt
				if c.configErr != "" {
					at = now
				}
				changed = ps.run(c, at, rc) || changed
			}
		}
		changed = ps.stopSidecars() || changed
	}
	return changed
}

// stepInits runs the init containers in order: each regular one once the
// one before completed, each sidecar once the one before it and then
// waits until its startup probe succeeded.
func (ps *podState) stepInits(rc *runtimeCtx) bool {
	at, changed := ps.sandboxAt, false
	for _, c := range ps.inits {
		if c.neverRan() {
			if c.configErr != "" {
				at = rc.now
			}
			return ps.run(c, at, rc) || changed
		}
		switch {
		case c.kind == kindSidecar && c.isStarted(rc.now):
			at = maxTime(at, c.startedAt.Add(c.probes.started))
		case c.kind == kindInit && c.term != nil && c.term.ExitCode == 0:
			at = maxTime(at, c.term.FinishedAt.Time)
		default:
			return changed // running, backing off or failed
		}
	}
	ps.initialized, ps.initDoneAt = true, at
	return true
}

// stopSidecars ends the sidecars once every regular container of a pod
// meant to finish has terminated for good, as the kubelet stops them
// (they exit 0 on its SIGTERM).
func (ps *podState) stopSidecars() bool {
	for _, c := range ps.containers {
		if c.term == nil {
			return false
		}
	}
	changed := false
	for _, c := range ps.inits {
		if c.kind == kindSidecar && (c.running || !c.restartAt.IsZero()) {
			end := maxTime(c.startedAt, ps.lastFinish())
			t := &corev1.ContainerStateTerminated{ExitCode: 0, Reason: reasonCompleted, ContainerID: ps.containerID(c),
				StartedAt: mt(c.startedAt), FinishedAt: mt(end)}
			if c.running {
				ps.event(c, corev1.EventTypeNormal, "Killing", "Stopping container "+c.name)
				c.logEnd(t, end)
			} else {
				t = c.last
			}
			c.running, c.exitAt, c.restartAt, c.term = false, time.Time{}, time.Time{}, t
			changed = true
		}
	}
	return changed
}

// lastFinish is when the last regular container finished.
func (ps *podState) lastFinish() time.Time {
	var t time.Time
	for _, c := range ps.containers {
		if c.term != nil {
			t = maxTime(t, c.term.FinishedAt.Time)
		}
	}
	return t
}

// failDeadline fails the pod for its active deadline: its running
// containers are killed at the deadline.
func (ps *podState) failDeadline() {
	ps.failReason, ps.failMsg = deadlineReason, deadlineMessage
	ps.podEvent(corev1.EventTypeWarning, deadlineReason, deadlineMessage)
	for _, c := range append(append([]*ctrState(nil), ps.inits...), ps.containers...) {
		if c.running {
			ps.event(c, corev1.EventTypeNormal, "Killing", "Stopping container "+c.name)
			t := &corev1.ContainerStateTerminated{ExitCode: exitKilled, Reason: reasonError, ContainerID: ps.containerID(c),
				StartedAt: mt(c.startedAt), FinishedAt: mt(ps.deadline)}
			c.logEnd(t, ps.deadline)
			c.running, c.exitAt, c.term = false, time.Time{}, t
		}
		c.restartAt, c.pull.retryAt = time.Time{}, time.Time{}
	}
}

// next is the earliest future event of the pod: an exit, a restart, a
// container turning started or ready, the deadline.
func (ps *podState) next(now time.Time) time.Time {
	var next time.Time
	add := func(t time.Time) {
		if !t.IsZero() && t.After(now) && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	if ps.failReason == "" && !isTerminal(ps.phase()) {
		add(ps.deadline)
	}
	for _, c := range append(append([]*ctrState(nil), ps.inits...), ps.containers...) {
		add(c.restartAt)
		for _, t := range c.pullTimes() {
			add(t)
		}
		if c.running {
			add(c.exitAt)
			add(c.startedAt.Add(c.probes.started))
			if c.probes.ready >= 0 {
				add(c.startedAt.Add(c.probes.ready))
			}
		}
	}
	return next
}

// phase is the pod phase the containers imply, as the kubelet derives
// it: Pending until initialized and while a container never ran; once
// every container ended for good, Succeeded if all exited 0, else Failed;
// Running otherwise.
func (ps *podState) phase() corev1.PodPhase {
	if ps.failReason != "" {
		return corev1.PodFailed
	}
	if !ps.started() {
		return corev1.PodPending
	}
	if !ps.initialized {
		for _, c := range ps.inits {
			if c.kind == kindInit && c.term != nil && c.term.ExitCode != 0 {
				return corev1.PodFailed
			}
		}
		return corev1.PodPending
	}
	done, failed, waiting := true, false, false
	for _, c := range ps.containers {
		if c.term != nil {
			failed = failed || c.term.ExitCode != 0
			continue
		}
		done = false
		waiting = waiting || (!c.running && c.last == nil)
	}
	switch {
	case done && failed:
		return corev1.PodFailed
	case done:
		return corev1.PodSucceeded
	case waiting:
		return corev1.PodPending
	}
	return corev1.PodRunning
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// probeFailure is what a failing simulated probe reports, worded as the
// kubelet's probers word their failures.
func probeFailure(p *corev1.Probe, podIP string) string {
	switch {
	case p == nil:
		return ""
	case p.HTTPGet != nil:
		return "HTTP probe failed with statuscode: 500"
	case p.TCPSocket != nil:
		return fmt.Sprintf("dial tcp %s:%s: connect: connection refused", podIP, p.TCPSocket.Port.String())
	case p.GRPC != nil:
		return `service unhealthy (responded with "NOT_SERVING")`
	}
	return "command exited with 1 (simulated)"
}
