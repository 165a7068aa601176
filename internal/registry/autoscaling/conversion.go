package autoscaling

import (
	"encoding/json"
	"maps"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// The annotations in which an autoscaling/v1 object carries what only v2
// can express, as Kubernetes writes them.
const (
	metricSpecsAnnotation    = "autoscaling.alpha.kubernetes.io/metrics"
	metricStatusesAnnotation = "autoscaling.alpha.kubernetes.io/current-metrics"
	conditionsAnnotation     = "autoscaling.alpha.kubernetes.io/conditions"
	behaviorAnnotation       = "autoscaling.alpha.kubernetes.io/behavior"
	toleranceDownAnnotation  = "autoscaling.alpha.kubernetes.io/scale-down-tolerance"
	toleranceUpAnnotation    = "autoscaling.alpha.kubernetes.io/scale-up-tolerance"
)

// defaultCPUUtilization is the target of an autoscaler that names none.
const defaultCPUUtilization = 80

var roundTripAnnotations = []string{
	metricSpecsAnnotation, behaviorAnnotation, toleranceDownAnnotation, toleranceUpAnnotation,
	metricStatusesAnnotation, conditionsAnnotation,
}

// withoutRoundTrip returns a copy of annotations without the round-trip
// ones (nil stays nil).
func withoutRoundTrip(in map[string]string) map[string]string {
	if in == nil {
		return nil
	}
	out := maps.Clone(in)
	for _, k := range roundTripAnnotations {
		delete(out, k)
	}
	return out
}

func isCPUUtilization(m *autoscalingv2.MetricSpec) bool {
	return m.Type == autoscalingv2.ResourceMetricSourceType && m.Resource != nil &&
		m.Resource.Name == corev1.ResourceCPU && m.Resource.Target.AverageUtilization != nil
}

// toV1 converts a v2 autoscaler to v1: the CPU utilization target is a
// field, every other metric, the current metrics, the behavior and the
// conditions travel in annotations.
func toV1(in *autoscalingv2.HorizontalPodAutoscaler) (*autoscalingv1.HorizontalPodAutoscaler, error) {
	out := &autoscalingv1.HorizontalPodAutoscaler{ObjectMeta: *in.ObjectMeta.DeepCopy()}
	out.APIVersion, out.Kind = "autoscaling/v1", "HorizontalPodAutoscaler"
	out.Annotations = withoutRoundTrip(out.Annotations)
	s := &in.Spec
	out.Spec = autoscalingv1.HorizontalPodAutoscalerSpec{
		ScaleTargetRef: autoscalingv1.CrossVersionObjectReference(s.ScaleTargetRef),
		MinReplicas:    s.MinReplicas, MaxReplicas: s.MaxReplicas,
	}
	var others []autoscalingv1.MetricSpec
	for i := range s.Metrics {
		m := &s.Metrics[i]
		if isCPUUtilization(m) {
			if out.Spec.TargetCPUUtilizationPercentage == nil {
				out.Spec.TargetCPUUtilizationPercentage = new(*m.Resource.Target.AverageUtilization)
			}
			continue
		}
		others = append(others, metricSpecToV1(m))
	}
	st := &in.Status
	out.Status = autoscalingv1.HorizontalPodAutoscalerStatus{
		ObservedGeneration: st.ObservedGeneration, LastScaleTime: st.LastScaleTime,
		CurrentReplicas: st.CurrentReplicas, DesiredReplicas: st.DesiredReplicas,
	}
	var current []autoscalingv1.MetricStatus
	for i := range st.CurrentMetrics {
		m := &st.CurrentMetrics[i]
		if m.Type == autoscalingv2.ResourceMetricSourceType && m.Resource != nil && m.Resource.Name == corev1.ResourceCPU &&
			m.Resource.Current.AverageUtilization != nil {
			out.Status.CurrentCPUUtilizationPercentage = new(*m.Resource.Current.AverageUtilization)
		}
		current = append(current, metricStatusToV1(m))
	}
	conds := make([]autoscalingv1.HorizontalPodAutoscalerCondition, len(st.Conditions))
	for i, c := range st.Conditions {
		conds[i] = autoscalingv1.HorizontalPodAutoscalerCondition{
			Type: autoscalingv1.HorizontalPodAutoscalerConditionType(c.Type), Status: c.Status,
			LastTransitionTime: c.LastTransitionTime, Reason: c.Reason, Message: c.Message, ObservedGeneration: c.ObservedGeneration,
		}
	}
	set := func(key string, v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		if out.Annotations == nil {
			out.Annotations = map[string]string{}
		}
		out.Annotations[key] = string(b)
		return nil
	}
	var behavior any
	if s.Behavior != nil {
		behavior = internalBehavior(s.Behavior)
	}
	for _, a := range []struct {
		present bool
		key     string
		value   any
	}{
		{len(others) > 0, metricSpecsAnnotation, others},
		{len(current) > 0, metricStatusesAnnotation, current},
		{behavior != nil, behaviorAnnotation, behavior},
		{len(conds) > 0, conditionsAnnotation, conds},
	} {
		if !a.present {
			continue
		}
		if err := set(a.key, a.value); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// toV2 converts a v1 autoscaler to v2, taking back from the annotations
// what toV1 put there.
func toV2(in *autoscalingv1.HorizontalPodAutoscaler) *autoscalingv2.HorizontalPodAutoscaler {
	out := &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: *in.ObjectMeta.DeepCopy()}
	out.APIVersion, out.Kind = "autoscaling/v2", "HorizontalPodAutoscaler"
	s := &in.Spec
	out.Spec = autoscalingv2.HorizontalPodAutoscalerSpec{
		ScaleTargetRef: autoscalingv2.CrossVersionObjectReference(s.ScaleTargetRef),
		MinReplicas:    s.MinReplicas, MaxReplicas: s.MaxReplicas,
	}
	if s.TargetCPUUtilizationPercentage != nil {
		out.Spec.Metrics = []autoscalingv2.MetricSpec{cpuUtilization(*s.TargetCPUUtilizationPercentage)}
	}
	st := &in.Status
	out.Status = autoscalingv2.HorizontalPodAutoscalerStatus{
		ObservedGeneration: st.ObservedGeneration, LastScaleTime: st.LastScaleTime,
		CurrentReplicas: st.CurrentReplicas, DesiredReplicas: st.DesiredReplicas,
	}
	if u := st.CurrentCPUUtilizationPercentage; u != nil {
		out.Status.CurrentMetrics = []autoscalingv2.MetricStatus{{
			Type:     autoscalingv2.ResourceMetricSourceType,
			Resource: &autoscalingv2.ResourceMetricStatus{Name: corev1.ResourceCPU, Current: autoscalingv2.MetricValueStatus{AverageUtilization: new(*u)}},
		}}
	}
	ann := in.Annotations
	var others []autoscalingv1.MetricSpec
	if v, ok := ann[metricSpecsAnnotation]; ok && json.Unmarshal([]byte(v), &others) == nil {
		metrics := make([]autoscalingv2.MetricSpec, 0, len(others)+1)
		for i := range others {
			metrics = append(metrics, metricSpecToV2(&others[i]))
		}
		if out.Spec.Metrics != nil {
			metrics = append(metrics, out.Spec.Metrics[0])
		}
		out.Spec.Metrics = metrics
	}
	if v, ok := ann[behaviorAnnotation]; ok {
		var b autoscalingv2.HorizontalPodAutoscalerBehavior
		if json.Unmarshal([]byte(v), &b) == nil && (b.ScaleUp != nil || b.ScaleDown != nil) {
			out.Spec.Behavior = &b
		}
	}
	var current []autoscalingv1.MetricStatus
	if v, ok := ann[metricStatusesAnnotation]; ok && json.Unmarshal([]byte(v), &current) == nil {
		out.Status.CurrentMetrics = make([]autoscalingv2.MetricStatus, len(current))
		for i := range current {
			out.Status.CurrentMetrics[i] = metricStatusToV2(&current[i])
		}
	}
	if len(out.Spec.Metrics) == 0 {
		out.Spec.Metrics = []autoscalingv2.MetricSpec{cpuUtilization(defaultCPUUtilization)}
	}
	var conds []autoscalingv1.HorizontalPodAutoscalerCondition
	if v, ok := ann[conditionsAnnotation]; ok && json.Unmarshal([]byte(v), &conds) == nil {
		out.Status.Conditions = make([]autoscalingv2.HorizontalPodAutoscalerCondition, len(conds))
		for i, c := range conds {
			out.Status.Conditions[i] = autoscalingv2.HorizontalPodAutoscalerCondition{
				Type: autoscalingv2.HorizontalPodAutoscalerConditionType(c.Type), Status: c.Status,
				LastTransitionTime: c.LastTransitionTime, Reason: c.Reason, Message: c.Message, ObservedGeneration: c.ObservedGeneration,
			}
		}
	}
	out.Annotations = withoutRoundTrip(out.Annotations)
	return out
}

func cpuUtilization(percent int32) autoscalingv2.MetricSpec {
	return autoscalingv2.MetricSpec{
		Type: autoscalingv2.ResourceMetricSourceType,
		Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{
			Type: autoscalingv2.UtilizationMetricType, AverageUtilization: new(percent),
		}},
	}
}

// internalBehavior renders a behavior as Kubernetes writes it into the v1
// annotation: its internal type, whose JSON names are the Go field names.
func internalBehavior(b *autoscalingv2.HorizontalPodAutoscalerBehavior) any {
	type policy struct {
		Type          autoscalingv2.HPAScalingPolicyType
		Value         int32
		PeriodSeconds int32
	}
	type rules struct {
		StabilizationWindowSeconds *int32
		SelectPolicy               *autoscalingv2.ScalingPolicySelect
		Policies                   []policy
		Tolerance                  *resource.Quantity
	}
	conv := func(r *autoscalingv2.HPAScalingRules) *rules {
		if r == nil {
			return nil
		}
		out := &rules{StabilizationWindowSeconds: r.StabilizationWindowSeconds, SelectPolicy: r.SelectPolicy, Tolerance: r.Tolerance}
		if r.Policies != nil {
			out.Policies = make([]policy, len(r.Policies))
			for i, p := range r.Policies {
				out.Policies[i] = policy(p)
			}
		}
		return out
	}
	return struct{ ScaleUp, ScaleDown *rules }{conv(b.ScaleUp), conv(b.ScaleDown)}
}
