package scheduler

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// eventPreempted is the reason of the event on a victim.
const eventPreempted = "Preempted"

// executePreemption evicts the victims as kube-scheduler does: each gets
// the DisruptionTarget condition (reason PreemptionByScheduler) and a
// Preempted event, then is deleted with its own grace period.
func (s *Scheduler) executePreemption(ctx context.Context, preemptor *corev1.Pod, pr *preemption) {
	for _, v := range pr.victims {
		if err := s.evictVictim(ctx, preemptor, v, pr.node); err != nil {
			s.mu.Lock()
			delete(s.evicting, v.UID)
			s.mu.Unlock()
			if ctx.Err() == nil {
				s.log.Warn("preemption failed", "preemptor", preemptor.Namespace+"/"+preemptor.Name,
					"victim", v.Namespace+"/"+v.Name, "err", err)
			}
		}
	}
}

func (s *Scheduler) evictVictim(ctx context.Context, preemptor, v *corev1.Pod, node string) error {
	cond := corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
		Reason:             corev1.PodReasonPreemptionByScheduler,
		Message:            fmt.Sprintf("%s: preempting to accommodate a higher priority pod", s.opts.SchedulerName),
		LastTransitionTime: metav1.NewTime(s.opts.Clock.Now())}
	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"uid": v.UID},
		"status":   map[string]any{"conditions": []corev1.PodCondition{cond}},
	})
	if err != nil {
		return fmt.Errorf("encode condition: %w", err)
	}
	pods := s.pods.Namespace(v.Namespace)
	if _, err := pods.Patch(ctx, v.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("condition of %s/%s: %w", v.Namespace, v.Name, err)
	}
	s.recorder.Eventf(v, corev1.EventTypeNormal, eventPreempted, "Preempted by pod %s on node %s", preemptor.UID, node)
	err = pods.Delete(ctx, v.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &v.UID}})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete %s/%s: %w", v.Namespace, v.Name, err)
	}
	return nil
}
