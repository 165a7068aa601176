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
