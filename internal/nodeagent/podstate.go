package nodeagent

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// timeGranularity is the precision of API timestamps (metav1.Time): the
// simulation keeps its times at it so a rebuilt status compares equal.
const timeGranularity = time.Second

// podState is the simulated runtime state of one pod on one of our nodes.
// The agent's mutex guards it; the pod's worker is its only writer apart
// from CrashContainer, which only adds to pending.
type podState struct {
	uid  types.UID
	node *node
	// seenAt is when the agent first saw the pod bound (StartDelay counts
	// from it); startedAt when its containers started (zero before).
	seenAt, startedAt time.Time
	// ip is the pod's address (empty before start); node.ipam holds it
	// for the pod until the pod is terminal or gone.
	ip string
	// stopAt is when the containers of a deleted pod have stopped; zero
	// until deletion is seen.
	stopAt time.Time
	// containers mirror spec.containers, in order; inits the init
	// containers (set at start: regular ones completed, sidecars
	// running), ephemeral the ephemeral containers started so far.
	containers, inits, ephemeral []*ctrState
	// crashAfter and crashExit come from the pod's annotations; crashAfter
	// zero means no scheduled crashes.
	crashAfter time.Duration
	crashExit  int32
	// pending holds injected crashes not applied yet: exit code by
	// container name.
	pending map[string]int32
	// conflicts counts consecutive write conflicts (immediate retries).
	conflicts int
	// stopped is set once the containers of a deleted pod were killed.
	stopped bool
}

// ctrState is one container. Exactly one of: running; waiting for a
// restart (restartAt set); terminated for good (term set).
type ctrState struct {
	name, image string
	restarts    int32
	running     bool
	// startedAt is when the current (or last) run started.
	startedAt time.Time
	// crashAt, when set on a running container, is its scheduled crash.
	crashAt time.Time
	// restartAt, when set, is the end of the crash back-off, which lasts
	// backoff.
	restartAt time.Time
	backoff   time.Duration
	// term is the final state; last the previous run's end (lastState).
	term, last *corev1.ContainerStateTerminated
	// log is what `kubectl logs` shows of its runs (logs.go).
	log logBook
}

// Log lines of the simulated containers' lives.
const (
	lineStarted   = "[setpoint] container %s started: image %s (simulated, nothing runs)"
	lineRestarted = "[setpoint] container %s restarted (restart %d): image %s"
	lineExited    = "[setpoint] container %s exited with code %d (%s)"
	lineKilled    = "[setpoint] container %s killed: pod deleted"
)

// logStart opens the log of a new run of c, started at.
func (c *ctrState) logStart(at time.Time) {
	in := c.log.begin()
	if c.restarts == 0 {
		in.add(at, lineStarted, c.name, c.image)
	} else {
		in.add(at, lineRestarted, c.name, c.restarts, c.image)
	}
}

// logEnd closes the log of the run that ended at as t.
func (c *ctrState) logEnd(t *corev1.ContainerStateTerminated, at time.Time) {
	if in := c.log.latest; in != nil && !in.ended {
		in.add(at, lineExited, c.name, t.ExitCode, t.Reason)
		in.end()
	}
}

// kill ends a running container's run as the pod's deletion stops it.
func (c *ctrState) kill(at time.Time) {
	if in := c.log.latest; in != nil && !in.ended {
		in.add(at, lineKilled, c.name)
	}
	c.log.endAll()
}

// allContainers lists the pod's simulated containers of every kind.
func (ps *podState) allContainers() []*ctrState {
	out := append(append([]*ctrState(nil), ps.inits...), ps.containers...)
	return append(out, ps.ephemeral...)
}

// container finds a simulated container by name.
func (ps *podState) container(name string) *ctrState {
	for _, c := range ps.allContainers() {
		if c.name == name {
			return c
		}
	}
	return nil
}

func newPodState(pod *corev1.Pod, n *node, now time.Time) *podState {
	ps := &podState{uid: pod.UID, node: n, seenAt: now, pending: map[string]int32{}}
	for _, c := range pod.Spec.Containers {
		ps.containers = append(ps.containers, &ctrState{name: c.Name, image: c.Image})
	}
	ps.crashAfter, ps.crashExit = crashKnobs(pod)
	return ps
}

// crashKnobs reads AnnotationCrashAfter and AnnotationCrashExitCode;
// unparsable values disable the knob.
func crashKnobs(pod *corev1.Pod) (time.Duration, int32) {
	d, err := time.ParseDuration(pod.Annotations[AnnotationCrashAfter])
	if err != nil || d <= 0 {
		return 0, 0
	}
	code := int32(1)
	if s, ok := pod.Annotations[AnnotationCrashExitCode]; ok {
		if v, err := strconv.ParseInt(s, 10, 32); err == nil {
			code = int32(v)
		}
	}
	return d, code
}

func (ps *podState) started() bool { return !ps.startedAt.IsZero() }

// start runs every container at now, after the init containers: regular
// ones complete at once, sidecars keep running.
func (ps *podState) start(pod *corev1.Pod, now time.Time) {
	ps.startedAt = now
	ps.startInits(pod)
	for i, c := range ps.containers {
		ps.run(i, c, now)
	}
}

// startInits records the init containers' runs at the pod's start.
func (ps *podState) startInits(pod *corev1.Pod) {
	ps.inits = nil
	for _, ic := range pod.Spec.InitContainers {
		c := &ctrState{name: ic.Name, image: ic.Image, startedAt: ps.startedAt, running: true}
		c.logStart(ps.startedAt)
		if !isSidecar(&ic) {
			c.running = false
			c.logEnd(&corev1.ContainerStateTerminated{Reason: "Completed"}, ps.startedAt)
		}
		ps.inits = append(ps.inits, c)
	}
}

func isSidecar(c *corev1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}

// startEphemeral starts the ephemeral containers added to the pod since
// the last look (they run until the pod is deleted, never restarted).
func (ps *podState) startEphemeral(pod *corev1.Pod, now time.Time) {
	for _, ec := range pod.Spec.EphemeralContainers {
		if ps.findEphemeral(ec.Name) != nil {
			continue
		}
		c := &ctrState{name: ec.Name, image: ec.Image, running: true, startedAt: now}
		if s := ephemeralStatus(pod, ec.Name); s != nil && s.State.Running != nil {
			c.startedAt = s.State.Running.StartedAt.Time // an earlier agent started it
		}
		c.logStart(c.startedAt)
		ps.ephemeral = append(ps.ephemeral, c)
	}
}

func (ps *podState) findEphemeral(name string) *ctrState {
	for _, c := range ps.ephemeral {
		if c.name == name {
			return c
		}
	}
	return nil
}

func ephemeralStatus(pod *corev1.Pod, name string) *corev1.ContainerStatus {
	for i := range pod.Status.EphemeralContainerStatuses {
		if s := &pod.Status.EphemeralContainerStatuses[i]; s.Name == name {
			return s
		}
	}
	return nil
}

// stop ends every running container: the pod was deleted, its containers
// are killed at.
func (ps *podState) stop(at time.Time) {
	for _, c := range ps.allContainers() {
		c.kill(at)
	}
}

// endLogs ends the logs of every container (the pod is gone): followers
// stop.
func (ps *podState) endLogs() {
	for _, c := range ps.allContainers() {
		c.log.endAll()
	}
}

// run starts container i at now and schedules its annotated crash.
func (ps *podState) run(i int, c *ctrState, now time.Time) {
	c.running, c.startedAt, c.restartAt = true, now, time.Time{}
	c.crashAt = time.Time{}
	if i == 0 && ps.crashAfter > 0 {
		c.crashAt = now.Add(ps.crashAfter)
	}
	c.logStart(now)
}

// adopt takes over a pod already started by an earlier incarnation of the
// agent, from its status. The logs are rebuilt from it too: the latest run
// and, from lastState, the one before.
func (ps *podState) adopt(pod *corev1.Pod, now time.Time) {
	ps.startedAt = pod.Status.StartTime.Time
	ps.ip = pod.Status.PodIP
	ps.startInits(pod)
	byName := map[string]corev1.ContainerStatus{}
	for _, s := range pod.Status.ContainerStatuses {
		byName[s.Name] = s
	}
	for i, c := range ps.containers {
		s, ok := byName[c.name]
		c.restarts = s.RestartCount
		c.last = s.LastTerminationState.Terminated
		switch {
		case ok && s.State.Terminated != nil:
			c.term, c.startedAt = s.State.Terminated, s.State.Terminated.StartedAt.Time
		case ok && s.State.Running != nil:
			ps.run(i, c, now)
			c.startedAt = s.State.Running.StartedAt.Time
		default: // waiting or unknown: start it now
			ps.run(i, c, now)
		}
		c.rebuildLog()
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

// advance applies every event due at now (injected crashes, scheduled
// crashes, restarts after back-off) and returns the time of the next
// scheduled event, zero if none.
func (ps *podState) advance(now time.Time, policy corev1.RestartPolicy, backoff time.Duration) time.Time {
	for i, c := range ps.containers {
		if code, ok := ps.pending[c.name]; ok {
			delete(ps.pending, c.name)
			if c.running {
				ps.crash(c, code, now, policy, backoff)
			}
		}
		if c.running && !c.crashAt.IsZero() && !now.Before(c.crashAt) {
			ps.crash(c, ps.crashExit, c.crashAt, policy, backoff)
		}
		if !c.running && !c.restartAt.IsZero() && !now.Before(c.restartAt) {
			ps.run(i, c, c.restartAt)
		}
	}
	var next time.Time
	for _, c := range ps.containers {
		for _, t := range []time.Time{c.crashAt, c.restartAt} {
			if !t.IsZero() && (next.IsZero() || t.Before(next)) {
				next = t
			}
		}
	}
	return next
}

// crash ends container c's run at "at" with the exit code; per the
// restart policy it restarts after the back-off or stays terminated.
func (ps *podState) crash(c *ctrState, code int32, at time.Time, policy corev1.RestartPolicy, base time.Duration) {
	reason := "Error"
	if code == 0 {
		reason = "Completed"
	}
	t := &corev1.ContainerStateTerminated{ExitCode: code, Reason: reason, ContainerID: ps.containerID(c),
		StartedAt: mt(c.startedAt), FinishedAt: mt(at)}
	c.running, c.crashAt = false, time.Time{}
	c.logEnd(t, at)
	if policy == corev1.RestartPolicyAlways || policy == "" || (policy == corev1.RestartPolicyOnFailure && code != 0) {
		c.last = t
		c.restarts++
		c.backoff = restartBackoff(base, c.restarts)
		c.restartAt = at.Add(c.backoff)
		return
	}
	c.term = t
}

// restartBackoff is base doubled per earlier restart, capped at
// MaxRestartBackoff, as the kubelet's crash-loop back-off.
func restartBackoff(base time.Duration, restarts int32) time.Duration {
	d := base
	for i := int32(1); i < restarts && d < MaxRestartBackoff; i++ {
		d *= 2
	}
	return min(d, MaxRestartBackoff)
}

// containerID is a stable fake runtime ID of c's current run.
func (ps *podState) containerID(c *ctrState) string {
	h := sha256.Sum256([]byte(string(ps.uid) + "/" + c.name + "/" + strconv.Itoa(int(c.restarts))))
	return "containerd://" + hex.EncodeToString(h[:])
}

// phase is the pod phase the containers imply: Running while any runs or
// will restart; once all ended, Succeeded if all exited 0, else Failed.
func (ps *podState) phase() corev1.PodPhase {
	failed := false
	for _, c := range ps.containers {
		if c.term == nil {
			return corev1.PodRunning
		}
		failed = failed || c.term.ExitCode != 0
	}
	if failed {
		return corev1.PodFailed
	}
	return corev1.PodSucceeded
}
