package disruption

import (
	"context"
	"fmt"
	"log/slog"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"

	"github.com/setpoint-dev/setpoint/informer"
	"github.com/setpoint-dev/setpoint/reconcile"
	"github.com/setpoint-dev/setpoint/rest"
)

// staleReconciler sets a stale DisruptionTarget condition of a pod to
// False.
type staleReconciler struct {
	log    *slog.Logger
	pods   *rest.Resource[*corev1.Pod, *corev1.PodList]
	podInf *informer.Informer[*corev1.Pod]
	clock  clock.PassiveClock
}

// hasDisruptionTarget: the pod carries a DisruptionTarget condition that
// may become stale (True, not the kubelet's, pod not being deleted nor
// finished).
func hasDisruptionTarget(pod *corev1.Pod) bool {
	if pod.DeletionTimestamp != nil || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return false
	}
	c := disruptionTarget(pod)
	return c != nil && c.Status == corev1.ConditionTrue && c.Reason != corev1.PodReasonTerminationByKubelet
}

func disruptionTarget(pod *corev1.Pod) *corev1.PodCondition {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == corev1.DisruptionTarget {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}

// Reconcile clears the condition once it is StalePodDisruptionTimeout old.
func (s *staleReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	pod, err := s.podInf.Lister().Namespace(req.Namespace).Get(req.Name)
	if apierrors.IsNotFound(err) {
		return reconcile.Result{}, nil
	}
	if err != nil {
		return reconcile.Result{}, err
	}
	if !hasDisruptionTarget(pod) {
		return reconcile.Result{}, nil
	}
	if wait := StalePodDisruptionTimeout - s.clock.Since(disruptionTarget(pod).LastTransitionTime.Time); wait > 0 {
		return reconcile.Result{RequeueAfter: wait}, nil
	}
	out := pod.DeepCopy()
	c := disruptionTarget(out)
	c.Status = corev1.ConditionFalse
	c.LastTransitionTime = metav1.NewTime(s.clock.Now())
	if _, err := s.pods.Namespace(pod.Namespace).UpdateStatus(ctx, out, metav1.UpdateOptions{}); err != nil {
		if apierrors.IsNotFound(err) {
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, fmt.Errorf("reset DisruptionTarget of pod %s: %w", req, err)
	}
	s.log.Info("reset stale DisruptionTarget condition to False", "pod", req.String())
	return reconcile.Result{}, nil
}
