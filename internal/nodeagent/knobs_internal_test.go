package nodeagent

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// Knob values: one value for the containers it applies to by default, or
// a container=value list; unparsable values are ignored.
func TestReadKnobs(t *testing.T) {
	pod := func(policy corev1.RestartPolicy, ann map[string]string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: ann}, Spec: corev1.PodSpec{RestartPolicy: policy}}
	}
	never := pod(corev1.RestartPolicyNever, map[string]string{AnnotationRunTime: "30s", AnnotationExitCode: "4"})
	if k := readKnobs(never, ctr("app"), 0, kindRegular, time.Minute); !k.finite || k.runTime != 30*time.Second || k.exitCode != 4 {
		t.Errorf("never, single value: %+v", k)
	}
	if k := readKnobs(never, ctr("side"), -1, kindSidecar, time.Minute); k.finite {
		t.Errorf("a single run time applies to a sidecar: %+v", k)
	}
	always := pod(corev1.RestartPolicyAlways, map[string]string{AnnotationRunTime: "30s"})
	if k := readKnobs(always, ctr("app"), 0, kindRegular, time.Minute); k.finite {
		t.Errorf("always, single value: %+v", k)
	}
	if k := readKnobs(always, ctr("init"), -1, kindInit, time.Minute); !k.finite || k.runTime != 30*time.Second {
		t.Errorf("init container: %+v", k)
	}
	list := pod(corev1.RestartPolicyAlways, map[string]string{AnnotationRunTime: "app=5s, side=1m",
		AnnotationCrashAfter: "b=3s", AnnotationCrashExitCode: "9", AnnotationNotReady: "a,b", AnnotationReadyAfter: "bogus"})
	if k := readKnobs(list, ctr("side"), -1, kindSidecar, 0); !k.finite || k.runTime != time.Minute {
		t.Errorf("named sidecar: %+v", k)
	}
	if k := readKnobs(list, ctr("app"), 0, kindRegular, 0); !k.finite || k.runTime != 5*time.Second || k.crashAfter != 0 || k.notReady {
		t.Errorf("named app: %+v", k)
	}
	if k := readKnobs(list, ctr("b"), 1, kindRegular, 0); k.finite || k.crashAfter != 3*time.Second || k.crashExit != 9 || !k.notReady || k.readyAfter != 0 {
		t.Errorf("b: %+v", k)
	}
	first := pod(corev1.RestartPolicyAlways, map[string]string{AnnotationCrashAfter: "5s"})
	if k := readKnobs(first, ctr("second"), 1, kindRegular, 0); k.crashAfter != 0 {
		t.Errorf("crash-after reached the second container: %+v", k)
	}
	// The default run time ends a container of a pod meant to finish only
	// when it names its program or its pod is a Job's.
	onFailure := pod(corev1.RestartPolicyOnFailure, nil)
	if k := readKnobs(onFailure, ctr("app"), 0, kindRegular, time.Minute); k.finite {
		t.Errorf("OnFailure, bare image: %+v", k)
	}
	withArgs := &corev1.Container{Name: "app", Args: []string{"echo", "hi"}}
	if k := readKnobs(onFailure, withArgs, 0, kindRegular, 0); !k.finite || k.runTime != 0 || k.exitCode != 0 {
		t.Errorf("OnFailure with args: %+v", k)
	}
	withCommand := &corev1.Container{Name: "app", Command: []string{"sh"}}
	if k := readKnobs(pod(corev1.RestartPolicyNever, nil), withCommand, 0, kindRegular, time.Minute); !k.finite || k.runTime != time.Minute {
		t.Errorf("Never with a command: %+v", k)
	}
	jobPod := pod(corev1.RestartPolicyNever, nil)
	jobPod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: "j", UID: "u", Controller: ptr.To(true)}}
	if k := readKnobs(jobPod, ctr("app"), 0, kindRegular, time.Minute); !k.finite || k.runTime != time.Minute {
		t.Errorf("Job pod, bare image: %+v", k)
	}
	jobPod.OwnerReferences[0].Controller = nil
	if k := readKnobs(jobPod, ctr("app"), 0, kindRegular, time.Minute); k.finite {
		t.Errorf("pod a Job owns without controlling it, bare image: %+v", k)
	}
}

func ctr(name string) *corev1.Container { return &corev1.Container{Name: name} }
