package podspec

import corev1 "k8s.io/api/core/v1"

// QOS computes a pod's quality-of-service class from its spec, as Kubernetes does, looking at cpu and memory only:
//   - BestEffort: no container requests or limits any of them;
//   - Guaranteed: every container limits both, and the summed requests
//     equal the summed limits;
//   - Burstable: anything else.
//
// When the pod sets pod-level resources, they alone decide.
func QOS(spec *corev1.PodSpec) corev1.PodQOSClass {
	var reqs []corev1.ResourceRequirements
	if r := spec.Resources; r != nil && len(r.Requests)+len(r.Limits) > 0 {
		reqs = []corev1.ResourceRequirements{*r}
	} else {
		for _, cs := range [][]corev1.Container{spec.Containers, spec.InitContainers} {
			for i := range cs {
				reqs = append(reqs, cs[i].Resources)
			}
		}
	}
	requests, limits := corev1.ResourceList{}, corev1.ResourceList{}
	guaranteed := true
	for _, r := range reqs {
		addQOSResources(requests, effectiveRequests(r))
		if n := addQOSResources(limits, r.Limits); n < 2 {
			guaranteed = false // must limit both cpu and memory
		}
	}
	if len(requests) == 0 && len(limits) == 0 {
		return corev1.PodQOSBestEffort
	}
	if guaranteed && len(requests) == len(limits) {
		for name, req := range requests {
			if lim, ok := limits[name]; !ok || lim.Cmp(req) != 0 {
				guaranteed = false
				break
			}
		}
		if guaranteed {
			return corev1.PodQOSGuaranteed
		}
	}
	return corev1.PodQOSBurstable
}

// effectiveRequests are the requests of r, a limit standing for each
// missing request as defaulting makes it, so that the class does not
// depend on whether defaults were applied yet.
func effectiveRequests(r corev1.ResourceRequirements) corev1.ResourceList {
	out := corev1.ResourceList{}
	for name, q := range r.Limits {
		out[name] = q
	}
	for name, q := range r.Requests {
		out[name] = q
	}
	return out
}

// addQOSResources adds the positive cpu and memory quantities of from into
// sum and returns how many of the two were positive.
func addQOSResources(sum, from corev1.ResourceList) int {
	n := 0
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		q, ok := from[name]
		if !ok || q.Sign() <= 0 {
			continue
		}
		n++
		total := q.DeepCopy()
		if prev, ok := sum[name]; ok {
			total.Add(prev)
		}
		sum[name] = total
	}
	return n
}
