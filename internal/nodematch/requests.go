package nodematch

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// RequestedResources lists, once each, the resources the pod requests
// anywhere (its containers, init containers, pod-level resources or
// overhead) that keep accepts; nil when there are none, without
// allocating.
func RequestedResources(spec *corev1.PodSpec, keep func(corev1.ResourceName) bool) []corev1.ResourceName {
	var out []corev1.ResourceName
	add := func(rl corev1.ResourceList) {
		for n := range rl {
			if keep(n) && !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	for i := range spec.Containers {
		add(spec.Containers[i].Resources.Requests)
	}
	for i := range spec.InitContainers {
		add(spec.InitContainers[i].Resources.Requests)
	}
	if spec.Resources != nil {
		add(spec.Resources.Requests)
	}
	add(spec.Overhead)
	return out
}

// PodRequest is what a pod takes of one resource, as Kubernetes computes
// it for scheduling and kubelet admission: the sum of its containers and
// sidecars (restartable init containers), or the largest regular init
// container plus the sidecars started before it, whichever is larger; a
// pod-level request replaces that; the overhead is added. CPU is counted
// in millicores, everything else in its plain value.
func PodRequest(spec *corev1.PodSpec, name corev1.ResourceName) int64 {
	var sum, sidecars, initMax int64
	for i := range spec.Containers {
		sum += Quantity(spec.Containers[i].Resources.Requests, name)
	}
	for i := range spec.InitContainers {
		c := &spec.InitContainers[i]
		v := Quantity(c.Resources.Requests, name)
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			sum, sidecars = sum+v, sidecars+v
			initMax = max(initMax, sidecars)
			continue
		}
		initMax = max(initMax, v+sidecars)
	}
	sum = max(sum, initMax)
	if spec.Resources != nil {
		if _, ok := spec.Resources.Requests[name]; ok {
			sum = Quantity(spec.Resources.Requests, name)
		}
	}
	return sum + Quantity(spec.Overhead, name)
}

// Quantity reads one resource of a list in PodRequest's unit (0 when the
// list lacks it).
func Quantity(rl corev1.ResourceList, name corev1.ResourceName) int64 {
	q, ok := rl[name]
	if !ok {
		return 0
	}
	if name == corev1.ResourceCPU {
		return q.MilliValue()
	}
	return q.Value()
}
