package podsecurity

import (
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// podTemplate returns the pod template of a workload kind kube-apiserver's
// PodSecurity checks (ReplicationControllers, PodTemplates, ReplicaSets,
// Deployments, StatefulSets, DaemonSets, Jobs, CronJobs); ok is false for
// any other object, and meta and spec are nil when the object has no
// template (a ReplicationController without one).
func podTemplate(obj runtime.Object) (meta *metav1.ObjectMeta, spec *corev1.PodSpec, ok bool) {
	var t *corev1.PodTemplateSpec
	switch o := obj.(type) {
	case *corev1.PodTemplate:
		t = &o.Template
	case *corev1.ReplicationController:
		t = o.Spec.Template
	case *appsv1.ReplicaSet:
		t = &o.Spec.Template
	case *appsv1.Deployment:
		t = &o.Spec.Template
	case *appsv1.StatefulSet:
		t = &o.Spec.Template
	case *appsv1.DaemonSet:
		t = &o.Spec.Template
	case *batchv1.Job:
		t = &o.Spec.Template
	case *batchv1.CronJob:
		t = &o.Spec.JobTemplate.Spec.Template
	default:
		return nil, nil, false
	}
	if t == nil {
		return nil, nil, true
	}
	return &t.ObjectMeta, &t.Spec, true
}

// significantPodUpdate: an update of a pod is checked again only when it
// changes what the checks could see change: the number of containers or
// init containers, an image, or an ephemeral container added or given a
// new image. (Everything else the checks read is immutable in a pod.)
func significantPodUpdate(pod, old *corev1.Pod) bool {
	if len(pod.Spec.Containers) != len(old.Spec.Containers) || len(pod.Spec.InitContainers) != len(old.Spec.InitContainers) {
		return true
	}
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Image != old.Spec.Containers[i].Image {
			return true
		}
	}
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Image != old.Spec.InitContainers[i].Image {
			return true
		}
	}
	for _, c := range pod.Spec.EphemeralContainers {
		found := false
		for _, oc := range old.Spec.EphemeralContainers {
			if oc.Name == c.Name {
				if oc.Image != c.Image {
					return true
				}
				found = true
				break
			}
		}
		if !found {
			return true
		}
	}
	return false
}

// ignoredPodSubresources are the pods' subresources never checked; any
// other (ephemeralcontainers, resize) carries a pod and is.
var ignoredPodSubresources = map[string]bool{
	"exec": true, "attach": true, "binding": true, "eviction": true, "log": true,
	"portforward": true, "proxy": true, "status": true,
}
