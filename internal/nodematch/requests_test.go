package nodematch

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestPodRequest(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	req := func(cpu, gpu string) corev1.ResourceRequirements {
		rl := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}
		if gpu != "" {
			rl["example.com/gpu"] = resource.MustParse(gpu)
		}
		return corev1.ResourceRequirements{Requests: rl}
	}
	spec := &corev1.PodSpec{
		InitContainers: []corev1.Container{
			{Name: "side", RestartPolicy: &always, Resources: req("200m", "")},
			{Name: "big", Resources: req("1", "2")}, // 1 + the 200m sidecar before it
		},
		Containers: []corev1.Container{{Name: "a", Resources: req("300m", "1")}, {Name: "b", Resources: req("100m", "")}},
		Overhead:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m")},
	}
	// cpu: max(300+100+200 sidecar, 1000+200) + 50 overhead; gpu: max(1, 2).
	if got := PodRequest(spec, corev1.ResourceCPU); got != 1250 {
		t.Errorf("cpu %d, want 1250 millicores", got)
	}
	if got := PodRequest(spec, "example.com/gpu"); got != 2 {
		t.Errorf("gpu %d, want 2", got)
	}
	spec.Resources = &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3")}}
	if got := PodRequest(spec, corev1.ResourceCPU); got != 3050 {
		t.Errorf("cpu with a pod-level request %d, want 3050 (the pod-level 3 plus overhead)", got)
	}
	names := RequestedResources(spec, func(n corev1.ResourceName) bool { return true })
	slices.Sort(names)
	if !slices.Equal(names, []corev1.ResourceName{corev1.ResourceCPU, "example.com/gpu"}) {
		t.Errorf("requested %v", names)
	}
	if got := RequestedResources(spec, func(n corev1.ResourceName) bool { return n == corev1.ResourceMemory }); got != nil {
		t.Errorf("nothing kept: %v, want nil", got)
	}
}
