package nodeagent

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Knob values: one value for the containers it applies to by default, or
// a container=value list; unparsable values are ignored.
func TestReadKnobs(t *testing.T) {
	pod := func(policy corev1.RestartPolicy, ann map[string]string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: ann}, Spec: corev1.PodSpec{RestartPolicy: policy}}
	}
	never := pod(corev1.RestartPolicyNever, map[string]string{AnnotationRunTime: "30s", AnnotationExitCode: "4"})
	if k := readKnobs(never, "app", 0, kindRegular, time.Minute); !k.finite || k.runTime != 30*time.Second || k.exitCode != 4 {
		t.Errorf("never, single value: %+v", k)
	}
	if k := readKnobs(never, "side", -1, kindSidecar, time.Minute); k.finite {
		t.Errorf("a single run time applies to a sidecar: %+v", k)
	}
	always := pod(corev1.RestartPolicyAlways, map[string]string{AnnotationRunTime: "30s"})
	if k := readKnobs(always, "app", 0, kindRegular, time.Minute); k.finite {
		t.Errorf("always, single value: %+v", k)
	}
	if k := readKnobs(always, "init", -1, kindInit, time.Minute); !k.finite || k.runTime != 30*time.Second {
		t.Errorf("init container: %+v", k)
	}
	list := pod(corev1.RestartPolicyAlways, map[string]string{AnnotationRunTime: "app=5s, side=1m",
		AnnotationCrashAfter: "b=3s", AnnotationCrashExitCode: "9", AnnotationNotReady: "a,b", AnnotationReadyAfter: "bogus"})
	if k := readKnobs(list, "side", -1, kindSidecar, 0); !k.finite || k.runTime != time.Minute {
		t.Errorf("named sidecar: %+v", k)
	}
	if k := readKnobs(list, "app", 0, kindRegular, 0); !k.finite || k.runTime != 5*time.Second || k.crashAfter != 0 || k.notReady {
		t.Errorf("named app: %+v", k)
	}
	if k := readKnobs(list, "b", 1, kindRegular, 0); k.finite || k.crashAfter != 3*time.Second || k.crashExit != 9 || !k.notReady || k.readyAfter != 0 {
		t.Errorf("b: %+v", k)
	}
	first := pod(corev1.RestartPolicyAlways, map[string]string{AnnotationCrashAfter: "5s"})
	if k := readKnobs(first, "second", 1, kindRegular, 0); k.crashAfter != 0 {
		t.Errorf("crash-after reached the second container: %+v", k)
	}
	if k := readKnobs(pod(corev1.RestartPolicyOnFailure, nil), "app", 0, kindRegular, 0); !k.finite || k.runTime != 0 || k.exitCode != 0 {
		t.Errorf("OnFailure default: %+v", k)
	}
}
