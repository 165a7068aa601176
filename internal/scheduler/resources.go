package scheduler

import (
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/setpoint-dev/setpoint/internal/nodematch"
)

// Scoring defaults for containers that request nothing, as kube-scheduler's
// non-zero requests: a best-effort pod still counts for something when
// nodes are compared, although it fits anywhere.
const (
	defaultMilliCPURequest int64 = 100               // 0.1 core
	defaultMemoryRequest   int64 = 200 * 1024 * 1024 // 200 MiB
)

// resources is an amount of CPU (millicores) and memory (bytes).
type resources struct {
	milliCPU, memory int64
}

func (r resources) add(o resources) resources {
	return resources{milliCPU: r.milliCPU + o.milliCPU, memory: r.memory + o.memory}
}

func (r resources) sub(o resources) resources {
	return resources{milliCPU: r.milliCPU - o.milliCPU, memory: r.memory - o.memory}
}

func (r resources) max(o resources) resources {
	return resources{milliCPU: max(r.milliCPU, o.milliCPU), memory: max(r.memory, o.memory)}
}

func (r resources) isZero() bool { return r.milliCPU == 0 && r.memory == 0 }

// podDemand is what a pod takes from a node, computed once per pod object.
type podDemand struct {
	// request is the pod's effective request, the filter's measure.
	request resources
	// nonZero is request with the scoring defaults for containers that
	// request no CPU or memory.
	nonZero resources
	// owner is the UID of the pod's controller ("" without one), the
	// spreading key.
	owner types.UID
	// scalar holds the requests of every resource but cpu, memory and
	// pods: ephemeral-storage, extended resources (nvidia.com/gpu),
	// hugepages-*; nil for most pods.
	scalar map[corev1.ResourceName]int64
	// ports are the host ports the pod's containers claim; nil for most.
	ports []nodematch.HostPort
}

// sameDemand reports whether two demands take the same from a node.
func sameDemand(a, b *podDemand) bool {
	return a.request == b.request && a.nonZero == b.nonZero && a.owner == b.owner &&
		maps.Equal(a.scalar, b.scalar) && slices.Equal(a.ports, b.ports)
}

// demandOf computes a pod's demand the way Kubernetes does: the sum of its
// containers and restartable (sidecar) init containers, or the largest
// regular init container plus the sidecars started before it, whichever is
// larger, plus the pod overhead. Pod-level requests (spec.resources)
// replace the container sum for the resources they name.
func demandOf(pod *corev1.Pod) podDemand {
	req, nz := containerSum(&pod.Spec)
	if pr := pod.Spec.Resources; pr != nil {
		if q, ok := pr.Requests[corev1.ResourceCPU]; ok {
			req.milliCPU, nz.milliCPU = q.MilliValue(), q.MilliValue()
		}
		if q, ok := pr.Requests[corev1.ResourceMemory]; ok {
			req.memory, nz.memory = q.Value(), q.Value()
		}
	}
	if oh := pod.Spec.Overhead; oh != nil {
		o := resources{milliCPU: oh.Cpu().MilliValue(), memory: oh.Memory().Value()}
		req, nz = req.add(o), nz.add(o)
	}
	return podDemand{request: req, nonZero: nz, owner: controllerUID(pod),
		scalar: scalarRequests(pod), ports: nodematch.HostPorts(pod)}
}

// isScalar reports whether a resource is counted in podDemand.scalar:
// every resource but cpu, memory and pods.
func isScalar(name corev1.ResourceName) bool {
	return name != corev1.ResourceCPU && name != corev1.ResourceMemory && name != corev1.ResourcePods
}

// scalarRequests is the pod's request of each scalar resource, with the
// same rule as CPU and memory (nodematch.PodRequest); nil for most pods.
func scalarRequests(pod *corev1.Pod) map[corev1.ResourceName]int64 {
	names := nodematch.RequestedResources(&pod.Spec, isScalar)
	if names == nil {
		return nil
	}
	out := make(map[corev1.ResourceName]int64, len(names))
	for _, n := range names {
		out[n] = nodematch.PodRequest(&pod.Spec, n)
	}
	return out
}

// containerSum returns the request and the non-zero request of the pod's
// containers, init containers included.
func containerSum(spec *corev1.PodSpec) (req, nz resources) {
	for i := range spec.Containers {
		r, n := containerRequest(&spec.Containers[i])
		req, nz = req.add(r), nz.add(n)
	}
	var sidecars, sidecarsNZ, initMax, initMaxNZ resources
	for i := range spec.InitContainers {
		c := &spec.InitContainers[i]
		r, n := containerRequest(c)
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			req, nz = req.add(r), nz.add(n)
			sidecars, sidecarsNZ = sidecars.add(r), sidecarsNZ.add(n)
			initMax, initMaxNZ = initMax.max(sidecars), initMaxNZ.max(sidecarsNZ)
			continue
		}
		initMax, initMaxNZ = initMax.max(r.add(sidecars)), initMaxNZ.max(n.add(sidecarsNZ))
	}
	return req.max(initMax), nz.max(initMaxNZ)
}

// containerRequest returns a container's request and its non-zero request.
func containerRequest(c *corev1.Container) (req, nz resources) {
	if q, ok := c.Resources.Requests[corev1.ResourceCPU]; ok {
		req.milliCPU = q.MilliValue()
		nz.milliCPU = req.milliCPU
	} else {
		nz.milliCPU = defaultMilliCPURequest
	}
	if q, ok := c.Resources.Requests[corev1.ResourceMemory]; ok {
		req.memory = q.Value()
		nz.memory = req.memory
	} else {
		nz.memory = defaultMemoryRequest
	}
	return req, nz
}

// controllerUID returns the UID of the owner reference marked controller,
// or "".
func controllerUID(pod *corev1.Pod) types.UID {
	for i := range pod.OwnerReferences {
		if r := &pod.OwnerReferences[i]; r.Controller != nil && *r.Controller {
			return r.UID
		}
	}
	return ""
}
