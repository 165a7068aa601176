package runtimeclass_test

import (
	"encoding/json"
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/admission/admissiontest"
	"github.com/setpoint-dev/setpoint/internal/testserver"
)

const podsPath = "/api/v1/namespaces/rc/pods"

func forbidden(name, msg string) admissiontest.Refusal {
	return admissiontest.Refusal{Code: 403, Reason: metav1.StatusReasonForbidden, Name: name, Kind: "pods",
		Message: `pods "` + name + `" is forbidden: ` + msg}
}

func pod(name string, f func(*corev1.PodSpec)) *corev1.Pod {
	p := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "x"}}}}
	f(&p.Spec)
	return p
}

func ptr[T any](v T) *T { return &v }

// TestRuntimeClassAdmission checks, against kube-apiserver v1.37's answers,
// the refusals (missing class, overhead differing from the class's or set
// without one, node selector conflict), each leaving the store unchanged,
// and what a class sets: overhead, node selector, tolerations merged after
// DefaultTolerationSeconds ran.
func TestRuntimeClassAdmission(t *testing.T) {
	s := admissiontest.Start(t, testserver.Options{})
	s.CreateNamespace("rc")
	s.MustDo(http.MethodPost, "/apis/node.k8s.io/v1/runtimeclasses", &nodev1.RuntimeClass{
		TypeMeta:   metav1.TypeMeta{APIVersion: "node.k8s.io/v1", Kind: "RuntimeClass"},
		ObjectMeta: metav1.ObjectMeta{Name: "kata"}, Handler: "h",
		Overhead: &nodev1.Overhead{PodFixed: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("10Mi")}},
		Scheduling: &nodev1.Scheduling{NodeSelector: map[string]string{"a": "b"}, Tolerations: []corev1.Toleration{
			{Key: "k", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
			{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}}},
	}, nil)
	s.MustDo(http.MethodPost, "/apis/node.k8s.io/v1/runtimeclasses", map[string]any{"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
		"metadata": map[string]any{"name": "plain"}, "handler": "h"}, nil)

	s.WantRefused(http.MethodPost, podsPath, pod("r1", func(s *corev1.PodSpec) { s.RuntimeClassName = ptr("missing") }), podsPath,
		forbidden("r1", `pod rejected: RuntimeClass "missing" not found`))
	s.WantRefused(http.MethodPost, podsPath, pod("r2", func(s *corev1.PodSpec) {
		s.RuntimeClassName, s.Overhead = ptr("kata"), corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
	}), podsPath, forbidden("r2", "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"))
	s.WantRefused(http.MethodPost, podsPath, pod("r3", func(s *corev1.PodSpec) {
		s.RuntimeClassName, s.NodeSelector = ptr("kata"), map[string]string{"a": "c"}
	}), podsPath, forbidden("r3", "conflict: runtimeClass.scheduling.nodeSelector[a] = b; pod.spec.nodeSelector[a] = c"))
	s.WantRefused(http.MethodPost, podsPath, pod("r4", func(s *corev1.PodSpec) {
		s.Overhead = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
	}), podsPath, forbidden("r4", "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead"))
	s.WantRefused(http.MethodPost, podsPath, pod("r6", func(s *corev1.PodSpec) {
		s.RuntimeClassName, s.Overhead = ptr("plain"), corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
	}), podsPath, forbidden("r6", "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead"))

	var got corev1.Pod
	s.MustDo(http.MethodPost, podsPath, pod("r5", func(s *corev1.PodSpec) {
		s.RuntimeClassName, s.NodeSelector = ptr("kata"), map[string]string{"x": "y"}
		s.Tolerations = []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists}}
	}), &got)
	// The reference server's answer to the same pod (keys sorted).
	const want = `{"nodeSelector":{"a":"b","x":"y"},"overhead":{"cpu":"100m","memory":"10Mi"},"tolerations":[` +
		`{"key":"k","operator":"Exists"},` +
		`{"key":"node.kubernetes.io/unreachable","operator":"Exists","effect":"NoExecute","tolerationSeconds":300},` +
		`{"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute"}]}`
	raw, _ := json.Marshal(map[string]any{"overhead": got.Spec.Overhead, "nodeSelector": got.Spec.NodeSelector, "tolerations": got.Spec.Tolerations})
	if string(raw) != want {
		t.Errorf("pod of class kata\n got %s\nwant %s", raw, want)
	}
	s.MustDo(http.MethodPost, podsPath, pod("same", func(s *corev1.PodSpec) {
		s.RuntimeClassName = ptr("kata")
		s.Overhead = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("10Mi")}
	}), nil)
}
