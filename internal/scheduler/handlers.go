package scheduler

import (
	"maps"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
)

// terminal reports whether a pod has finished: it holds no node resources.
func terminal(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}

// onPod handles an added (old nil) or updated pod. Bound pods are counted
// in the cache (confirming an assumption) and leave the queue; pending pods
// of this scheduler enter or refresh the queue.
func (s *Scheduler) onPod(old, pod *corev1.Pod) {
	if pod.Spec.NodeName != "" {
		s.queue.remove(pod.UID)
		s.mu.Lock()
		move := false
		if terminal(pod) {
			_, move = s.cache.pods[pod.UID]
			s.cache.remove(pod.UID)
		} else {
			// A pod newly shown bound (by anyone, or created bound) may
			// satisfy a waiting pod's affinity or spreading.
			p := s.cache.pods[pod.UID]
			move = p == nil || p.assumed
			s.cache.confirm(pod, pod.Spec.NodeName, demandOf(pod))
			delete(s.nominated, pod.UID)
		}
		s.mu.Unlock()
		if move {
			s.queue.moveAll()
		}
		return
	}
	if old != nil && old.Spec.NodeName != "" {
		// Unbound (not possible through the API, but a cache may see it).
		s.releasePod(pod)
	}
	if pod.Spec.SchedulerName != s.opts.SchedulerName || pod.DeletionTimestamp != nil || terminal(pod) ||
		len(pod.Spec.SchedulingGates) > 0 {
		// A gated pod waits outside the queue (kube-scheduler's
		// SchedulingGates PreEnqueue) until its gates are removed.
		s.queue.remove(pod.UID)
		s.forgetNomination(pod.UID)
		return
	}
	s.mu.Lock()
	assumed := s.cache.isAssumed(pod.UID)
	s.mu.Unlock()
	if assumed && old != nil {
		// Being bound: refresh the queue's object, nothing to decide.
		s.queue.addOrUpdate(pod, demandOf(pod), false)
		return
	}
	specChanged := old == nil || old.Generation != pod.Generation || len(old.Spec.SchedulingGates) > 0
	s.queue.addOrUpdate(pod, demandOf(pod), specChanged)
}

// onPodDelete releases a deleted pod's resources, or drops it from the
// queue if it was pending.
func (s *Scheduler) onPodDelete(pod *corev1.Pod) {
	s.queue.remove(pod.UID)
	s.forgetNomination(pod.UID)
	s.releasePod(pod)
}

// releasePod uncounts a pod and, if it held resources, gives the
// unschedulable pods another chance.
func (s *Scheduler) releasePod(pod *corev1.Pod) {
	s.mu.Lock()
	_, held := s.cache.pods[pod.UID]
	s.cache.remove(pod.UID)
	s.mu.Unlock()
	if held {
		s.queue.moveAll()
	}
}

// onNode handles an added (old nil) or updated node. A change that can
// make pods fit (allocatable, labels, taints, unschedulable, readiness)
// moves the unschedulable pods; heartbeats do not.
func (s *Scheduler) onNode(old, node *corev1.Node) {
	s.mu.Lock()
	s.cache.setNode(node)
	s.mu.Unlock()
	if old == nil || nodeChanged(old, node) {
		s.queue.moveAll()
	}
}

func (s *Scheduler) onNodeDelete(node *corev1.Node) {
	s.mu.Lock()
	s.cache.removeNode(node.Name)
	s.mu.Unlock()
}

// nodeChanged reports a change of what the filters read.
func nodeChanged(old, node *corev1.Node) bool {
	return old.Spec.Unschedulable != node.Spec.Unschedulable ||
		!maps.Equal(old.Labels, node.Labels) ||
		!apiequality.Semantic.DeepEqual(old.Spec.Taints, node.Spec.Taints) ||
		!apiequality.Semantic.DeepEqual(old.Status.Allocatable, node.Status.Allocatable) ||
		readyStatus(old) != readyStatus(node)
}

func readyStatus(node *corev1.Node) corev1.ConditionStatus {
	for i := range node.Status.Conditions {
		if node.Status.Conditions[i].Type == corev1.NodeReady {
			return node.Status.Conditions[i].Status
		}
	}
	return ""
}
