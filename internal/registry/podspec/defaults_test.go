package podspec

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestImagePullPolicy(t *testing.T) {
	for image, want := range map[string]corev1.PullPolicy{
		"nginx":                            corev1.PullAlways,
		"nginx:latest":                     corev1.PullAlways,
		"nginx:1.27":                       corev1.PullIfNotPresent,
		"localhost:5000/nginx":             corev1.PullAlways,
		"localhost:5000/nginx:2":           corev1.PullIfNotPresent,
		"nginx@sha256:0123456789abcdef":    corev1.PullIfNotPresent,
		"nginx:latest@sha256:0123456789ab": corev1.PullAlways,
	} {
		if got := pullPolicyFor(image); got != want {
			t.Errorf("pullPolicyFor(%q) = %s, want %s", image, got, want)
		}
	}
}

// TestNegativeGracePeriod: as kube-apiserver, a pod's negative grace
// period becomes 1 s, and a template keeps its own.
func TestNegativeGracePeriod(t *testing.T) {
	pod := &corev1.Pod{Spec: corev1.PodSpec{TerminationGracePeriodSeconds: new(int64(-5)), Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
	DefaultPod(pod)
	if g := pod.Spec.TerminationGracePeriodSeconds; *g != 1 {
		t.Errorf("pod grace period %d, want 1", *g)
	}
	tmpl := corev1.PodSpec{TerminationGracePeriodSeconds: new(int64(-5)), Containers: []corev1.Container{{Name: "c", Image: "i"}}}
	DefaultPodSpec(&tmpl)
	if g := tmpl.TerminationGracePeriodSeconds; *g != -5 {
		t.Errorf("template grace period %d, want -5", *g)
	}
}
