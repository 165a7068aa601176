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
	name string
	ns   string
	node *node
	// policy is the pod's restartPolicy.
	policy corev1.RestartPolicy
	// depBackoff is the last wait before a node reading as itself looks
	// again at the dependencies the pod waits for (zero: not waiting).
	// depRetryAt is when that look is due (wall-clock time).
	depBackoff time.Duration
	depRetryAt time.Time
	// seenAt is when the agent first saw the pod bound (StartDelay counts
	// from it); admittedAt when the kubelet took it in (status.startTime),
	// sandboxAt when its volumes were ready and its sandbox (address)
	// made, after which containers run. Zero before.
	seenAt, admittedAt, sandboxAt time.Time
	// deadline is admittedAt + activeDeadlineSeconds (zero: none).
	deadline time.Time
	// failReason and failMsg, once set, fail the whole pod (deadline).
	failReason, failMsg string
	// initialized is set once every init container completed (sidecars
	// started); initDoneAt is when.
	initialized bool
	initDoneAt  time.Time
	// mountErr is the FailedMount message while a volume is missing.
	mountErr string
	// ip is the pod's address (empty before the sandbox); node.ipam holds
	// it for the pod until the pod is terminal or gone.
	ip string
	// stopAt is when the containers of a deleted pod have stopped; zero
	// until deletion is seen.
	stopAt time.Time
	// containers mirror spec.containers, inits spec.initContainers, in
	// order; ephemeral the ephemeral containers started so far.
	containers, inits, ephemeral []*ctrState
	// hasInits tells whether the pod has init containers (waiting reason).
	hasInits bool
	// pending holds injected crashes not applied yet: exit code by
	// container name.
	pending map[string]int32
	// conflicts counts consecutive write conflicts (immediate retries).
	conflicts int
	// stopped is set once the containers of a deleted pod were killed.
	stopped bool
	// events are the kubelet events recorded by the last transitions,
	// written (outside the lock) by the worker.
	events []kubeletEvent
	// record tells whether events are recorded.
	record bool
	// pod is the latest pod object the worker saw (admission reads its
	// spec, its node's later admissions its requests and ports).
	pod *corev1.Pod
	// released is set once the pod no longer holds its node's resources
	// (terminal or gone): admission stops counting it.
	released bool
	// rejectReason and rejectMsg, once set, are the kubelet's refusal of
	// the pod (admission.go), at rejectedAt; the pod never runs.
	rejectReason, rejectMsg string
	rejectedAt              time.Time
}

// ctrState is one container. Exactly one of: never started (waiting);
// running; waiting for a restart (restartAt set); terminated for good
// (term set).
type ctrState struct {
	name, image string
	kind        containerKind
	// spec is the container's spec (probes, env, pull policy).
	spec  *corev1.Container
	knobs knobs
	// fieldPath names the container in events.
	fieldPath string
	restarts  int32
	running   bool
	// startedAt is when the current (or last) run started; probes its
	// probe times.
	startedAt time.Time
	probes    probeTimes
	// exitAt, when set on a running container, is when its run ends, with
	// exitCode; byLiveness tells that its liveness probe kills it.
	exitAt     time.Time
	exitCode   int32
	byLiveness bool
	// restartAt, when set, is the end of the crash back-off, which lasts
	// backoff.
	restartAt time.Time
	backoff   time.Duration
	// term is the final state; last the previous run's end (lastState).
	term, last *corev1.ContainerStateTerminated
	// configErr is why the container cannot be created (a missing
	// ConfigMap or Secret): it waits in CreateContainerConfigError.
	configErr string
	// pull is its image's failed pull, if any (pull.go).
	pull pullState
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

// Exit codes and reasons of the simulated ends of runs.
const (
	exitKilled       = 137 // SIGKILL: liveness failure, deadline
	reasonCompleted  = "Completed"
	reasonError      = "Error"
	deadlineReason   = "DeadlineExceeded"
	deadlineMessage  = "Pod was active on the node longer than the specified deadline"
	maxAdvanceRounds = 64
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

// newPodState builds the state of a pod first seen at now; defRun is the
// default run time of containers meant to finish.
func newPodState(pod *corev1.Pod, n *node, now time.Time, defRun time.Duration) *podState {
	ps := &podState{uid: pod.UID, name: pod.Name, ns: pod.Namespace, node: n, seenAt: now,
		policy: pod.Spec.RestartPolicy, pending: map[string]int32{}, hasInits: len(pod.Spec.InitContainers) > 0}
	if ps.policy == "" {
		ps.policy = corev1.RestartPolicyAlways
	}
	for i := range pod.Spec.InitContainers {
		spec := pod.Spec.InitContainers[i].DeepCopy()
		kind := kindInit
		if isSidecar(spec) {
			kind = kindSidecar
		}
		ps.inits = append(ps.inits, &ctrState{name: spec.Name, image: spec.Image, kind: kind, spec: spec,
			knobs: readKnobs(pod, spec, -1, kind, defRun), fieldPath: "spec.initContainers{" + spec.Name + "}"})
	}
	for i := range pod.Spec.Containers {
		spec := pod.Spec.Containers[i].DeepCopy()
		ps.containers = append(ps.containers, &ctrState{name: spec.Name, image: spec.Image, kind: kindRegular, spec: spec,
			knobs: readKnobs(pod, spec, i, kindRegular, defRun), fieldPath: "spec.containers{" + spec.Name + "}"})
	}
	ps.initialized = len(ps.inits) == 0
	return ps
}

func isSidecar(c *corev1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}

// admit takes the pod in at now (its startTime), or at the startTime an
// earlier agent reported, and sets its active deadline.
func (ps *podState) admit(pod *corev1.Pod, now time.Time) {
	ps.admittedAt = now.Truncate(timeGranularity)
	if st := pod.Status.StartTime; st != nil {
		ps.admittedAt = st.Time
	}
	ps.setDeadline(pod, now)
}

// setDeadline sets the active deadline from the pod's
// activeDeadlineSeconds, counted from its admission. The field may be set
// or lowered on a running pod, so every sync of an admitted pod calls it.
// A deadline that changes to a time already past takes effect at now, when
// the node sees it (as the kubelet's active-deadline handler kills the pod
// on its next look), not at a time whose events were already reported.
func (ps *podState) setDeadline(pod *corev1.Pod, now time.Time) {
	ads := pod.Spec.ActiveDeadlineSeconds
	if ads == nil || !ps.admitted() {
		return
	}
	d := ps.admittedAt.Add(time.Duration(*ads) * time.Second)
	if d.Equal(ps.deadline) {
		return
	}
	if d.Before(now) {
		d = now
	}
	ps.deadline = d
}

func (ps *podState) admitted() bool { return !ps.admittedAt.IsZero() }
func (ps *podState) started() bool  { return !ps.sandboxAt.IsZero() }

// neverRan reports a container that has not run yet.
func (c *ctrState) neverRan() bool {
	return !c.running && c.term == nil && c.restartAt.IsZero() && c.startedAt.IsZero()
}

// isStarted reports whether c runs and its startup probe succeeded by now.
func (c *ctrState) isStarted(now time.Time) bool {
	return c.running && !now.Before(c.startedAt.Add(c.probes.started))
}

// isReady reports whether c runs and is ready at now.
func (c *ctrState) isReady(now time.Time) bool {
	return c.running && c.probes.ready >= 0 && !now.Before(c.startedAt.Add(c.probes.ready))
}

// startEphemeral starts the ephemeral containers added to the pod since
// the last look (they run until the pod is deleted, never restarted).
func (ps *podState) startEphemeral(pod *corev1.Pod, now time.Time) {
	for _, ec := range pod.Spec.EphemeralContainers {
		if ps.findEphemeral(ec.Name) != nil {
			continue
		}
		c := &ctrState{name: ec.Name, image: ec.Image, kind: kindEphemeral, running: true, startedAt: now,
			probes: probeTimes{ready: -1, livenessKill: -1, livenessFail: -1}}
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
		if c.running {
			ps.event(c, corev1.EventTypeNormal, "Killing", "Stopping container "+c.name)
		}
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
