package nodeagent

import (
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Annotations read from a pod when the agent first handles it (KWOK-style
// knobs). Each value is either one value for every container it applies
// to, or a comma-separated list of container=value pairs naming init and
// regular containers alike ("main=30s,setup=2s"); a container the list
// does not name gets the default. Unparsable values are ignored.
const (
	// AnnotationRunTime is how long a container runs before it exits
	// ("5s", "1m"). A single value applies to regular init containers and
	// to the containers of pods whose restartPolicy is Never or OnFailure,
	// whose default is Options.RunTime; a container named in a list runs
	// that long whatever its kind (under restartPolicy Always it is then
	// restarted, as a container that exits).
	AnnotationRunTime = "setpoint.dev/run-time"
	// AnnotationExitCode is the exit code of a container whose run time
	// ends (default 0: Completed; non-zero: Error).
	AnnotationExitCode = "setpoint.dev/exit-code"
	// AnnotationCrashAfter is a duration: the container crashes that long
	// after each start, and is restarted or not per the pod's
	// restartPolicy. A single value applies to the first container only.
	AnnotationCrashAfter = "setpoint.dev/crash-after"
	// AnnotationCrashExitCode is the exit code of those crashes (default 1).
	AnnotationCrashExitCode = "setpoint.dev/crash-exit-code"
	// AnnotationLivenessFailAfter is a duration: the livenessProbe of the
	// container fails from that long after each start, so that the
	// kubelet kills (exit code 137) and restarts it after failureThreshold
	// failed probes. Containers without a livenessProbe ignore it.
	AnnotationLivenessFailAfter = "setpoint.dev/liveness-fail-after"
	// AnnotationReadyAfter is a duration: the container's readiness probe
	// (or, without one, the container) succeeds only from that long after
	// each start.
	AnnotationReadyAfter = "setpoint.dev/ready-after"
	// AnnotationNotReady "true" (or a comma-separated list of container
	// names) keeps the containers unready: their readiness probe fails.
	AnnotationNotReady = "setpoint.dev/not-ready"
)

// knobs are one container's annotated behaviour.
type knobs struct {
	// runTime is how long a run lasts when finite is set.
	runTime  time.Duration
	finite   bool
	exitCode int32
	// crashAfter (zero: never) ends each run with crashExit.
	crashAfter time.Duration
	crashExit  int32
	// livenessFailAfter (zero: never) fails the liveness probe.
	livenessFailAfter time.Duration
	readyAfter        time.Duration
	notReady          bool
}

// containerKind tells the kinds of containers apart.
type containerKind int

const (
	kindRegular containerKind = iota
	kindInit
	kindSidecar
	kindEphemeral
)

// knobValue returns the annotation's value for the container: the list
// entry naming it, or the single value when all (the single value applies
// to this container). ok is false when the annotation says nothing for it.
func knobValue(pod *corev1.Pod, key, container string, all bool) (string, bool) {
	v, ok := pod.Annotations[key]
	if !ok {
		return "", false
	}
	if !strings.Contains(v, "=") {
		return v, all
	}
	for _, part := range strings.Split(v, ",") {
		name, val, _ := strings.Cut(strings.TrimSpace(part), "=")
		if name == container {
			return strings.TrimSpace(val), true
		}
	}
	return "", false
}

func knobDuration(pod *corev1.Pod, key, container string, all bool) (time.Duration, bool) {
	s, ok := knobValue(pod, key, container, all)
	if !ok {
		return 0, false
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, false
	}
	return d, true
}

func knobCode(pod *corev1.Pod, key, container string, all bool, def int32) int32 {
	s, ok := knobValue(pod, key, container, all)
	if !ok {
		return def
	}
	v, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		return def
	}
	return int32(v)
}

// readKnobs reads the knobs of container c: index is its position among
// the regular containers (-1 for others), kind its kind, defRun the
// agent's default run time.
func readKnobs(pod *corev1.Pod, c *corev1.Container, index int, kind containerKind, defRun time.Duration) knobs {
	var k knobs
	name := c.Name
	finishes := kind == kindInit || (kind == kindRegular && pod.Spec.RestartPolicy != corev1.RestartPolicyAlways && pod.Spec.RestartPolicy != "")
	if d, ok := knobDuration(pod, AnnotationRunTime, name, finishes); ok {
		k.runTime, k.finite = d, true
	} else if finishes && (kind == kindInit || endsByItself(pod, c)) {
		k.runTime, k.finite = defRun, true
	}
	k.exitCode = knobCode(pod, AnnotationExitCode, name, true, 0)
	if d, ok := knobDuration(pod, AnnotationCrashAfter, name, index == 0); ok && d > 0 {
		k.crashAfter = d
		k.crashExit = knobCode(pod, AnnotationCrashExitCode, name, true, 1)
	}
	nonEphemeral := kind != kindEphemeral
	if d, ok := knobDuration(pod, AnnotationLivenessFailAfter, name, nonEphemeral); ok {
		k.livenessFailAfter = max(d, time.Nanosecond)
	}
	k.readyAfter, _ = knobDuration(pod, AnnotationReadyAfter, name, nonEphemeral)
	if v, ok := pod.Annotations[AnnotationNotReady]; ok && nonEphemeral {
		if v == "true" {
			k.notReady = true
		} else {
			for _, n := range strings.Split(v, ",") {
				k.notReady = k.notReady || strings.TrimSpace(n) == name
			}
		}
	}
	return k
}

// endsByItself tells whether a regular container of a pod whose
// restartPolicy is Never or OnFailure ends after the default run time: it
// does when its pod belongs to a Job (KWOK's rule: its default stages
// complete Job pods only) or when it names its program (command or args,
// as `kubectl run --restart=Never x --image=busybox -- echo hi`, a Helm
// test hook or an e2e pod checking a volume does). A bare image under
// Never — a server left to run, as the e2e suite's agnhost pods that must
// stay Running — runs until deleted, as it would on a kubelet.
func endsByItself(pod *corev1.Pod, c *corev1.Container) bool {
	if len(c.Command) > 0 || len(c.Args) > 0 {
		return true
	}
	ref := metav1.GetControllerOfNoCopy(pod)
	return ref != nil && ref.Kind == "Job" && strings.HasPrefix(ref.APIVersion, "batch/")
}
