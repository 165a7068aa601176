package podautoscaler

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
)

// computeReplicasForMetrics is the highest proposal of the metrics that
// could be computed, the name of the metric that made it and every
// metric's status. -1 with an error: nothing usable (all metrics failed,
// or some failed and the rest would scale down); a proposal with an error:
// some metrics failed, the others scale up.
func (r *reconciler) computeReplicasForMetrics(ctx context.Context, hpa *autoscalingv2.HorizontalPodAutoscaler, specReplicas, statusReplicas int32, selector string, now time.Time) (int32, string, []autoscalingv2.MetricStatus, error) {
	sel, err := r.validateSelector(hpa, selector, now)
	if err != nil {
		return -1, "", nil, err
	}
	statuses := make([]autoscalingv2.MetricStatus, len(hpa.Spec.Metrics))
	var replicas int32
	var metric string
	invalid := 0
	var firstErr error
	var firstCond autoscalingv2.HorizontalPodAutoscalerCondition
	for i, spec := range hpa.Spec.Metrics {
		start := time.Now()
		p, name, cond, err := r.computeReplicasForMetric(ctx, hpa, spec, specReplicas, statusReplicas, sel, &statuses[i], now)
		r.metrics.observeMetric(hpa.Status.CurrentReplicas, p, err, spec.Type, time.Since(start))
		if err != nil {
			if invalid == 0 {
				firstErr, firstCond = err, cond
			}
			invalid++
			continue
		}
		if replicas == 0 || p > replicas {
			replicas, metric = p, name
		}
	}
	if firstErr != nil {
		firstErr = fmt.Errorf("invalid metrics (%v invalid out of %v), first error is: %w", invalid, len(hpa.Spec.Metrics), firstErr)
	}
	if invalid >= len(hpa.Spec.Metrics) || (invalid > 0 && replicas < specReplicas) {
		setCondition(hpa, firstCond.Type, firstCond.Status, firstCond.Reason, now, "%s", firstCond.Message)
		return -1, "", statuses, firstErr
	}
	setCondition(hpa, autoscalingv2.ScalingActive, corev1.ConditionTrue, "ValidMetricFound", now, "the HPA was able to successfully calculate a replica count from %s", metric)
	return replicas, metric, statuses, firstErr
}

// validateSelector parses the target's selector and refuses one whose pods
// another autoscaler of the namespace also selects.
func (r *reconciler) validateSelector(hpa *autoscalingv2.HorizontalPodAutoscaler, selector string, now time.Time) (labels.Selector, error) {
	if selector == "" {
		msg := "selector is required"
		r.recorder.Event(hpa, corev1.EventTypeWarning, "SelectorRequired", msg)
		setCondition(hpa, autoscalingv2.ScalingActive, corev1.ConditionFalse, "InvalidSelector", now, "the HPA target's scale is missing a selector")
		return nil, errors.New(msg)
	}
	sel, err := labels.Parse(selector)
	if err != nil {
		msg := fmt.Sprintf("couldn't convert selector into a corresponding internal selector object: %v", err)
		r.recorder.Event(hpa, corev1.EventTypeWarning, "InvalidSelector", msg)
		setCondition(hpa, autoscalingv2.ScalingActive, corev1.ConditionFalse, "InvalidSelector", now, "%s", msg)
		return nil, errors.New(msg)
	}
	key := types.NamespacedName{Namespace: hpa.Namespace, Name: hpa.Name}
	pods, err := r.podInf.Lister().Namespace(hpa.Namespace).List(sel)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.selectors[key] = sel
	var others []string
	for k, s := range r.selectors {
		if k.Namespace != key.Namespace {
			continue
		}
		for _, p := range pods {
			if s.Matches(labels.Set(p.Labels)) {
				others = append(others, k.String())
				break
			}
		}
	}
	r.mu.Unlock()
	if len(others) > 1 {
		sort.Strings(others)
		msg := fmt.Sprintf("pods by selector %v are controlled by more than one HPA (e.g. [%s])", selector, strings.Join(others[:2], " "))
		r.recorder.Event(hpa, corev1.EventTypeWarning, "AmbiguousSelector", msg)
		setCondition(hpa, autoscalingv2.ScalingActive, corev1.ConditionFalse, "AmbiguousSelector", now, "%s", msg)
		return nil, errors.New(msg)
	}
	return sel, nil
}

// unableCondition records the event of a metric that could not be
// computed and returns the ScalingActive condition it would set.
func (r *reconciler) unableCondition(hpa *autoscalingv2.HorizontalPodAutoscaler, reason string, err error) autoscalingv2.HorizontalPodAutoscalerCondition {
	r.recorder.Event(hpa, corev1.EventTypeWarning, reason, err.Error())
	return autoscalingv2.HorizontalPodAutoscalerCondition{Type: autoscalingv2.ScalingActive, Status: corev1.ConditionFalse,
		Reason: reason, Message: fmt.Sprintf("the HPA was unable to compute the replica count: %v", err)}
}

// computeReplicasForMetric computes one metric's proposal and status.
func (r *reconciler) computeReplicasForMetric(ctx context.Context, hpa *autoscalingv2.HorizontalPodAutoscaler, spec autoscalingv2.MetricSpec,
	specReplicas, statusReplicas int32, sel labels.Selector, status *autoscalingv2.MetricStatus, now time.Time) (int32, string, autoscalingv2.HorizontalPodAutoscalerCondition, error) {
	none := autoscalingv2.HorizontalPodAutoscalerCondition{}
	switch spec.Type {
	case autoscalingv2.ResourceMetricSourceType:
		if spec.Resource == nil {
			break
		}
		p, cur, name, err := r.resourceReplicas(ctx, hpa, specReplicas, spec.Resource.Target, spec.Resource.Name, "", sel, now)
		if err != nil {
			return 0, "", r.unableCondition(hpa, "FailedGetResourceMetric", err), fmt.Errorf("failed to get %s resource metric value: %w", spec.Resource.Name, err)
		}
		*status = autoscalingv2.MetricStatus{Type: spec.Type, Resource: &autoscalingv2.ResourceMetricStatus{Name: spec.Resource.Name, Current: cur}}
		return p, name, none, nil
	case autoscalingv2.ContainerResourceMetricSourceType:
		if spec.ContainerResource == nil {
			break
		}
		c := spec.ContainerResource
		p, cur, name, err := r.resourceReplicas(ctx, hpa, specReplicas, c.Target, c.Name, c.Container, sel, now)
		if err != nil {
			return 0, "", r.unableCondition(hpa, "FailedGetContainerResourceMetric", err), fmt.Errorf("failed to get %s container metric value: %w", c.Container, err)
		}
		*status = autoscalingv2.MetricStatus{Type: spec.Type, ContainerResource: &autoscalingv2.ContainerResourceMetricStatus{Name: c.Name, Container: c.Container, Current: cur}}
		return p, name, none, nil
	case autoscalingv2.PodsMetricSourceType, autoscalingv2.ObjectMetricSourceType, autoscalingv2.ExternalMetricSourceType:
		return r.unsupportedMetric(hpa, spec)
	}
	err := fmt.Errorf("unknown metric source type %q%w", string(spec.Type), errSpec)
	return 0, "", r.unableCondition(hpa, "InvalidMetricSourceType", err), err
}

// resourceReplicas is the proposal of a Resource or ContainerResource
// metric (container "" for the whole pod) and its current value.
func (r *reconciler) resourceReplicas(ctx context.Context, hpa *autoscalingv2.HorizontalPodAutoscaler, current int32, target autoscalingv2.MetricTarget,
	res corev1.ResourceName, container string, sel labels.Selector, now time.Time) (int32, autoscalingv2.MetricValueStatus, string, error) {
	var cur autoscalingv2.MetricValueStatus
	if target.AverageValue == nil && target.AverageUtilization == nil {
		return 0, cur, "", errors.New("invalid resource metric source: neither an average utilization target nor an average value (usage) target was set")
	}
	wrap := "failed to get %s utilization: %w"
	if target.AverageValue != nil {
		wrap = "failed to get %s usage: %w"
	}
	metrics, err := r.resourceMetrics(ctx, res, hpa.Namespace, sel, container)
	if err != nil {
		return 0, cur, "", fmt.Errorf(wrap, res, fmt.Errorf("unable to get metrics for resource %s: %w", res, err))
	}
	pods, err := r.podInf.Lister().Namespace(hpa.Namespace).List(sel)
	if err != nil {
		return 0, cur, "", fmt.Errorf(wrap, res, fmt.Errorf("unable to get pods while calculating replica count: %w", err))
	}
	c := calc{pods: pods, metrics: metrics, res: res, container: container, current: current,
		tol: r.tolerances(hpa), rd: readiness{r.opts.CPUInitializationPeriod, r.opts.InitialReadinessDelay}, now: now}
	var p int32
	var raw int64
	if target.AverageValue != nil {
		p, raw, err = c.rawReplicas(target.AverageValue.MilliValue())
		if err != nil {
			return 0, cur, "", fmt.Errorf(wrap, res, err)
		}
		q := quantity(res, raw)
		cur.AverageValue = &q
		return p, cur, fmt.Sprintf("%s resource", res), nil
	}
	var util int32
	p, util, raw, err = c.utilizationReplicas(*target.AverageUtilization)
	if err != nil {
		return 0, cur, "", fmt.Errorf(wrap, res, err)
	}
	q := quantity(res, raw)
	cur.AverageUtilization, cur.AverageValue = &util, &q
	name := fmt.Sprintf("%s resource utilization (percentage of request)", res)
	if container != "" {
		name = fmt.Sprintf("%s container resource utilization (percentage of request)", res)
	}
	return p, cur, name, nil
}

// quantity is a raw milli-value as kube reports it: memory in binary
// units, the rest decimal.
func quantity(res corev1.ResourceName, milli int64) resource.Quantity {
	format := resource.DecimalSI
	if res == corev1.ResourceMemory {
		format = resource.BinarySI
	}
	return *resource.NewMilliQuantity(milli, format)
}

// tolerances are the autoscaler's (behavior.scaleUp/scaleDown.tolerance,
// HPAConfigurableTolerance being GA in 1.37) or the controller's.
func (r *reconciler) tolerances(hpa *autoscalingv2.HorizontalPodAutoscaler) tolerances {
	t := tolerances{down: r.opts.Tolerance, up: r.opts.Tolerance}
	if b := hpa.Spec.Behavior; b != nil {
		if b.ScaleDown != nil && b.ScaleDown.Tolerance != nil {
			t.down = b.ScaleDown.Tolerance.AsApproximateFloat64()
		}
		if b.ScaleUp != nil && b.ScaleUp.Tolerance != nil {
			t.up = b.ScaleUp.Tolerance.AsApproximateFloat64()
		}
	}
	return t
}

// resourceMetrics lists the pods' usage of res from metrics.k8s.io: each
// pod's sum over its containers (all must report res), or one container's.
func (r *reconciler) resourceMetrics(ctx context.Context, res corev1.ResourceName, ns string, sel labels.Selector, container string) (map[string]podMetric, error) {
	list, err := r.podMetrics.Namespace(ns).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return nil, fmt.Errorf("unable to fetch metrics from resource metrics API: %w", err)
	}
	if len(list.Items) == 0 {
		return nil, errors.New("no metrics returned from resource metrics API")
	}
	out := make(map[string]podMetric, len(list.Items))
	for _, m := range list.Items {
		if v, ok := usageOf(m.Containers, res, container); ok {
			out[m.Name] = podMetric{value: v, timestamp: m.Timestamp.Time, window: m.Window.Duration}
		}
	}
	return out, nil
}

// usageOf is the pods' containers' usage of res (milli-units): one
// container's, or the sum of all when container is "", which every
// container must report.
func usageOf(ctrs []metricsv1beta1.ContainerMetrics, res corev1.ResourceName, container string) (int64, bool) {
	var sum int64
	for _, c := range ctrs {
		if container != "" && c.Name != container {
			continue
		}
		v, ok := c.Usage[res]
		if !ok {
			return 0, false
		}
		if container != "" {
			return v.MilliValue(), true
		}
		sum += v.MilliValue()
	}
	return sum, container == "" && len(ctrs) > 0
}
