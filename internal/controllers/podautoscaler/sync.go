package podautoscaler

import (
	"context"
	"errors"
	"fmt"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// Reconcile actions, as the controller's metrics label them.
const (
	actionNone      = "none"
	actionScaleUp   = "scale_up"
	actionScaleDown = "scale_down"
)

// errSpec marks errors of the autoscaler's spec (the "spec" error label).
var errSpec = errors.New("")

// sync is one pass of kube-controller-manager's reconcileAutoscaler over
// hpa (a copy): read the target's scale, compute the replicas its metrics
// want, bound them, rescale, write the status.
func (r *reconciler) sync(ctx context.Context, hpa *autoscalingv2.HorizontalPodAutoscaler) (string, error) {
	key := types.NamespacedName{Namespace: hpa.Namespace, Name: hpa.Name}
	original := hpa.Status.DeepCopy()
	ref := hpa.Spec.ScaleTargetRef
	reference := fmt.Sprintf("%s/%s/%s", ref.Kind, hpa.Namespace, ref.Name)
	now := r.opts.Clock.Now()

	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		r.failGetScale(ctx, hpa, original, err, now)
		return actionNone, fmt.Errorf("invalid API version in scale target reference: %v%w", err, errSpec)
	}
	ms, err := r.scales.mappings(ctx, gv, ref.Kind)
	if err != nil {
		r.scales.invalidate()
		r.failGetScale(ctx, hpa, original, err, now)
		return actionNone, fmt.Errorf("unable to determine resource for scale target reference: %w", err)
	}
	scale, m, err := r.scales.get(ctx, hpa.Namespace, ref.Name, ms)
	if err != nil {
		r.failGetScale(ctx, hpa, original, err, now)
		return actionNone, fmt.Errorf("failed to query scale subresource for %s: %w", reference, err)
	}
	setCondition(hpa, autoscalingv2.AbleToScale, corev1.ConditionTrue, "SucceededGetScale", now, "the HPA controller was able to get the target's current scale")
	current := scale.Spec.Replicas
	mem := r.memoryOf(key)
	if mem.recommendations == nil {
		mem.recommendations = []recommendation{{replicas: current, at: now}}
	}
	minR := int32(1)
	if hpa.Spec.MinReplicas != nil {
		minR = *hpa.Spec.MinReplicas
	}

	var statuses []autoscalingv2.MetricStatus
	var retErr error
	desired, reason, rescale := int32(0), "", true
	switch {
	case current == 0:
		// Scaling from zero needs Object or External metrics, which are
		// not served here (see the package documentation).
		desired, rescale = 0, false
		setCondition(hpa, autoscalingv2.ScalingActive, corev1.ConditionFalse, "ScalingDisabled", now, "scaling is disabled since the replica count of the target is zero")
	case current > hpa.Spec.MaxReplicas:
		desired, reason = hpa.Spec.MaxReplicas, "Current number of replicas above Spec.MaxReplicas"
	case current < minR:
		desired, reason = minR, "Current number of replicas below Spec.MinReplicas"
	default:
		proposal, metricName, sts, err := r.computeReplicasForMetrics(ctx, hpa, scale.Spec.Replicas, scale.Status.Replicas, scale.Status.Selector, now)
		statuses = sts
		if err != nil && proposal == -1 {
			setStatus(hpa, current, hpa.Status.DesiredReplicas, statuses, false, now)
			r.writeStatus(ctx, original, hpa)
			r.recorder.Event(hpa, corev1.EventTypeWarning, "FailedComputeMetricsReplicas", err.Error())
			return actionNone, fmt.Errorf("failed to compute desired number of replicas based on listed metrics for %s: %w", reference, err)
		}
		retErr = err
		rescaleMetric := ""
		if proposal > desired {
			desired, rescaleMetric = proposal, metricName
		}
		if desired > current {
			reason = fmt.Sprintf("%s above target", rescaleMetric)
		}
		if desired < current {
			reason = "All metrics below target"
		}
		desired = r.normalize(hpa, mem, current, desired, minR, now)
		rescale = desired != current
	}

	action, scaledAt := actionNone, now
	if rescale {
		if err := r.scales.update(ctx, hpa.Namespace, scale, m, desired); err != nil {
			r.recorder.Eventf(hpa, corev1.EventTypeWarning, "FailedRescale", "New size: %d; reason: %s; error: %v", desired, reason, err.Error())
			setCondition(hpa, autoscalingv2.AbleToScale, corev1.ConditionFalse, "FailedUpdateScale", now, "the HPA controller was unable to update the target scale: %v", err)
			setStatus(hpa, current, hpa.Status.DesiredReplicas, statuses, false, now)
			r.writeStatus(ctx, original, hpa)
			return actionNone, fmt.Errorf("failed to rescale %s: %w", reference, err)
		}
		// The rescale happened when its write returned, not when the sync
		// began: reading the metrics and retrying conflicts take time, and
		// a scale event stamped with the sync's start would end the
		// behavior's periods that much early (kube too stamps the event
		// when it stores it, after the write). lastScaleTime tells the
		// same time.
		scaledAt = r.opts.Clock.Now()
		setCondition(hpa, autoscalingv2.AbleToScale, corev1.ConditionTrue, "SucceededRescale", now, "the HPA controller was able to update the target scale to %d", desired)
		r.recorder.Eventf(hpa, corev1.EventTypeNormal, "SuccessfulRescale", "New size: %d; reason: %s", desired, reason)
		mem.storeScaleEvent(hpa.Spec.Behavior, current, desired, scaledAt)
		// HPAScaleToZero (beta, on in 1.37) marks every rescale; the
		// workload is never scaled to zero without Object or External
		// metrics.
		setCondition(hpa, autoscalingv2.ScaledToZero, corev1.ConditionFalse, "NotScaledToZero", now, "the HPA controller did not scale the workload to zero")
		r.log.Info("successfully rescaled", "hpa", key.String(), "currentReplicas", current, "desiredReplicas", desired, "reason", reason)
		action = actionScaleDown
		if desired > current {
			action = actionScaleUp
		}
	} else {
		desired = current
	}
	setStatus(hpa, current, desired, statuses, rescale, scaledAt)
	r.metrics.desired(key, desired)
	if err := r.writeStatus(ctx, original, hpa); err != nil {
		return action, err
	}
	return action, retErr
}

// failGetScale records a target whose scale cannot be read.
func (r *reconciler) failGetScale(ctx context.Context, hpa *autoscalingv2.HorizontalPodAutoscaler, original *autoscalingv2.HorizontalPodAutoscalerStatus, err error, now time.Time) {
	r.recorder.Event(hpa, corev1.EventTypeWarning, "FailedGetScale", err.Error())
	setCondition(hpa, autoscalingv2.AbleToScale, corev1.ConditionFalse, "FailedGetScale", now, "the HPA controller was unable to get the target's current scale: %v", err)
	_ = r.writeStatus(ctx, original, hpa)
}

// normalize bounds the metrics' proposal: stabilization and min/max with
// kube's default limits without a behavior, the behavior's windows and
// rate policies with one; it sets AbleToScale and ScalingLimited.
func (r *reconciler) normalize(hpa *autoscalingv2.HorizontalPodAutoscaler, mem *memory, current, desired, minR int32, now time.Time) int32 {
	var stabilized int32
	var l limit
	if b := hpa.Spec.Behavior; b == nil {
		stabilized = mem.stabilize(desired, r.opts.DownscaleStabilization, now)
		if stabilized != desired {
			setCondition(hpa, autoscalingv2.AbleToScale, corev1.ConditionTrue, "ScaleDownStabilized", now, "recent recommendations were higher than current one, applying the highest recent recommendation")
		} else {
			setCondition(hpa, autoscalingv2.AbleToScale, corev1.ConditionTrue, "ReadyForNewScale", now, "recommended size matches current size")
		}
		l = rulesLimit(current, stabilized, minR, hpa.Spec.MaxReplicas)
	} else {
		b = r.completeBehavior(b)
		var reason, message string
		stabilized, reason, message = mem.stabilizeBehavior(b, current, desired, now)
		if stabilized != desired {
			setCondition(hpa, autoscalingv2.AbleToScale, corev1.ConditionTrue, reason, now, "%s", message)
		} else {
			setCondition(hpa, autoscalingv2.AbleToScale, corev1.ConditionTrue, "ReadyForNewScale", now, "recommended size matches current size")
		}
		l = mem.behaviorLimit(b, current, stabilized, minR, hpa.Spec.MaxReplicas, now)
	}
	status := corev1.ConditionFalse
	if l.replicas != stabilized {
		status = corev1.ConditionTrue
	}
	setCondition(hpa, autoscalingv2.ScalingLimited, status, l.reason, now, "%s", l.message)
	return l.replicas
}

// completeBehavior fills what the API server's defaulting leaves unset: a
// scaleDown window is the controller's downscale stabilization, as
// kube-controller-manager fills it; missing rules get the API defaults.
func (r *reconciler) completeBehavior(b *autoscalingv2.HorizontalPodAutoscalerBehavior) *autoscalingv2.HorizontalPodAutoscalerBehavior {
	b = b.DeepCopy()
	if b.ScaleUp == nil {
		b.ScaleUp = &autoscalingv2.HPAScalingRules{Policies: []autoscalingv2.HPAScalingPolicy{
			{Type: autoscalingv2.PodsScalingPolicy, Value: 4, PeriodSeconds: 15},
			{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15}}}
	}
	if b.ScaleDown == nil {
		b.ScaleDown = &autoscalingv2.HPAScalingRules{Policies: []autoscalingv2.HPAScalingPolicy{
			{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15}}}
	}
	if b.ScaleUp.StabilizationWindowSeconds == nil {
		b.ScaleUp.StabilizationWindowSeconds = new(int32(0))
	}
	if b.ScaleDown.StabilizationWindowSeconds == nil {
		b.ScaleDown.StabilizationWindowSeconds = new(int32(r.opts.DownscaleStabilization.Seconds()))
	}
	return b
}

// setStatus rebuilds the status as kube does: replicas, metrics, the
// generation observed, lastScaleTime moved to scaledAt on a rescale;
// conditions kept.
func setStatus(hpa *autoscalingv2.HorizontalPodAutoscaler, current, desired int32, statuses []autoscalingv2.MetricStatus, rescale bool, scaledAt time.Time) {
	gen := hpa.Generation
	hpa.Status = autoscalingv2.HorizontalPodAutoscalerStatus{
		ObservedGeneration: &gen,
		CurrentReplicas:    current,
		DesiredReplicas:    desired,
		LastScaleTime:      hpa.Status.LastScaleTime,
		CurrentMetrics:     statuses,
		Conditions:         hpa.Status.Conditions,
	}
	if rescale {
		t := metav1.NewTime(scaledAt)
		hpa.Status.LastScaleTime = &t
	}
}

// writeStatus writes the status when it changed.
func (r *reconciler) writeStatus(ctx context.Context, original *autoscalingv2.HorizontalPodAutoscalerStatus, hpa *autoscalingv2.HorizontalPodAutoscaler) error {
	if equality.Semantic.DeepEqual(original, &hpa.Status) {
		return nil
	}
	if _, err := r.hpas.Namespace(hpa.Namespace).UpdateStatus(ctx, hpa, metav1.UpdateOptions{}); err != nil {
		r.recorder.Event(hpa, corev1.EventTypeWarning, "FailedUpdateStatus", err.Error())
		return fmt.Errorf("failed to update status for %s: %w", hpa.Name, err)
	}
	return nil
}

// setCondition sets a condition's status, reason and message, moving its
// lastTransitionTime when the status changes.
func setCondition(hpa *autoscalingv2.HorizontalPodAutoscaler, typ autoscalingv2.HorizontalPodAutoscalerConditionType, status corev1.ConditionStatus, reason string, now time.Time, format string, args ...any) {
	conds := hpa.Status.Conditions
	i := 0
	for ; i < len(conds) && conds[i].Type != typ; i++ {
	}
	if i == len(conds) {
		conds = append(conds, autoscalingv2.HorizontalPodAutoscalerCondition{Type: typ})
	}
	c := &conds[i]
	if c.Status != status {
		c.LastTransitionTime = metav1.NewTime(now)
	}
	c.Status, c.Reason, c.Message = status, reason, fmt.Sprintf(format, args...)
	hpa.Status.Conditions = conds
}
