package scheduler

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/setpoint-dev/setpoint/rest"
)

// Event reasons, kube-scheduler's.
const (
	eventScheduled        = "Scheduled"
	eventFailedScheduling = "FailedScheduling"
)

// bind writes the Binding of an assumed pod. On success the pod leaves the
// queue (the informer will confirm the assumption); on failure the
// assumption is forgotten and the pod backs off, unless it is gone.
func (s *Scheduler) bind(ctx context.Context, qp *queuedPod, pod *corev1.Pod, node string, vb *volumeBinding) {
	var err error
	if vb != nil {
		err = s.bindVolumes(ctx, pod, node, vb)
		s.releaseVolumes(vb)
	}
	if err == nil {
		err = s.postBinding(ctx, pod, node)
	}
	if err == nil {
		s.queue.done(qp)
		s.recorder.Eventf(pod, corev1.EventTypeNormal, eventScheduled, "Successfully assigned %s/%s to %s",
			pod.Namespace, pod.Name, node)
		return
	}
	s.mu.Lock()
	s.cache.forget(pod.UID)
	s.mu.Unlock()
	if apierrors.IsNotFound(err) {
		s.queue.remove(pod.UID)
		return
	}
	if ctx.Err() == nil {
		s.log.Warn("binding failed", "pod", pod.Namespace+"/"+pod.Name, "node", node, "err", err)
		s.recorder.Eventf(pod, corev1.EventTypeWarning, eventFailedScheduling, "Binding rejected: %v", err)
	}
	s.queue.requeueBackoff(qp)
	// The forgotten pod's resources are free again.
	s.queue.moveAll()
}

// postBinding creates pods/<name>/binding targeting node, with the pod's
// UID as precondition.
func (s *Scheduler) postBinding(ctx context.Context, pod *corev1.Pod, node string) error {
	b := &corev1.Binding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Binding"},
		ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID},
		Target:     corev1.ObjectReference{Kind: "Node", Name: node},
	}
	// The binding subresource is addressed as a collection of its own under
	// the pod, so that Create posts to .../pods/<name>/binding. The answer
	// is a Status, read as unstructured.
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "pods/" + pod.Name + "/binding"}
	res := rest.Dynamic(s.client, gvr, true).Namespace(pod.Namespace)
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(b)
	if err != nil {
		return fmt.Errorf("encode binding of %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	if _, err := res.Create(ctx, &unstructured.Unstructured{Object: m}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("bind %s/%s to %s: %w", pod.Namespace, pod.Name, node, err)
	}
	return nil
}

// reportUnschedulable records a FailedScheduling event and, unless the pod
// already says so, sets its PodScheduled condition to False with reason
// Unschedulable and the fit error as message, and its nominatedNodeName to
// the node it preempted on ("" clears it).
func (s *Scheduler) reportUnschedulable(ctx context.Context, pod *corev1.Pod, fitErr *fitError, nominated string) {
	msg := fitErr.Error()
	s.recorder.Event(pod, corev1.EventTypeWarning, eventFailedScheduling, msg)
	if cur := scheduledCondition(pod); cur != nil && cur.Status == corev1.ConditionFalse &&
		cur.Reason == corev1.PodReasonUnschedulable && cur.Message == msg && pod.Status.NominatedNodeName == nominated {
		return
	}
	s.write(ctx, func() {
		if err := s.patchUnschedulable(ctx, pod, msg, nominated); err != nil && ctx.Err() == nil && !apierrors.IsNotFound(err) {
			s.log.Warn("cannot set PodScheduled=False", "pod", pod.Namespace+"/"+pod.Name, "err", err)
		}
	})
}

func scheduledCondition(pod *corev1.Pod) *corev1.PodCondition {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == corev1.PodScheduled {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}

// patchUnschedulable strategic-merge-patches the PodScheduled condition
// through the status subresource; the transition time stays when the
// condition was already False.
func (s *Scheduler) patchUnschedulable(ctx context.Context, pod *corev1.Pod, msg, nominated string) error {
	cond := corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
		Reason: corev1.PodReasonUnschedulable, Message: msg, LastTransitionTime: metav1.NewTime(s.opts.Clock.Now())}
	if cur := scheduledCondition(pod); cur != nil && cur.Status == corev1.ConditionFalse {
		cond.LastTransitionTime = cur.LastTransitionTime
	}
	status := map[string]any{"conditions": []corev1.PodCondition{cond}}
	switch {
	case nominated != "":
		status["nominatedNodeName"] = nominated
	case pod.Status.NominatedNodeName != "":
		status["nominatedNodeName"] = nil
	}
	patch := map[string]any{"metadata": map[string]any{"uid": pod.UID}, "status": status}
	data, err := json.Marshal(patch)
	if err != nil {
		return fmt.Errorf("encode status patch: %w", err)
	}
	_, err = s.pods.Namespace(pod.Namespace).Patch(ctx, pod.Name, types.StrategicMergePatchType, data,
		metav1.PatchOptions{}, "status")
	if err != nil {
		return fmt.Errorf("patch status of %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	return nil
}
