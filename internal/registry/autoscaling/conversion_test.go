package autoscaling

import (
	"testing"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func richHPA() *autoscalingv2.HorizontalPodAutoscaler {
	q := resource.MustParse("10")
	return &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", Annotations: map[string]string{"team": "a"}},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MinReplicas:    new(int32(2)), MaxReplicas: 9,
			Metrics: []autoscalingv2.MetricSpec{
				{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{
					Metric: autoscalingv2.MetricIdentifier{Name: "qps"},
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: &q}}},
				{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricSource{
					Metric: autoscalingv2.MetricIdentifier{Name: "queue"},
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: &q}}},
				cpuUtilization(60),
			},
			Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: scaleDownDefaults(), ScaleUp: scaleUpDefaults()},
		},
		Status: autoscalingv2.HorizontalPodAutoscalerStatus{
			CurrentReplicas: 3, DesiredReplicas: 4, ObservedGeneration: new(int64(2)),
			CurrentMetrics: []autoscalingv2.MetricStatus{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricStatus{
				Name: corev1.ResourceCPU, Current: autoscalingv2.MetricValueStatus{AverageUtilization: new(int32(70)), AverageValue: &q}}}},
			Conditions: []autoscalingv2.HorizontalPodAutoscalerCondition{{Type: autoscalingv2.AbleToScale, Status: corev1.ConditionTrue, Reason: "ok"}},
		},
	}
}

// TestConversionRoundTrip: what v2 says survives v1 and back (the CPU
// target moves to the end of the metrics, as Kubernetes puts it back), and
// v1 shows the CPU target and current utilization in its own fields.
func TestConversionRoundTrip(t *testing.T) {
	h := richHPA()
	v1, err := toV1(h)
	if err != nil {
		t.Fatal(err)
	}
	if *v1.Spec.TargetCPUUtilizationPercentage != 60 || *v1.Status.CurrentCPUUtilizationPercentage != 70 {
		t.Errorf("v1 fields: %+v %+v", v1.Spec, v1.Status)
	}
	if len(v1.Annotations) != 5 {
		t.Errorf("v1 annotations: %v", v1.Annotations)
	}
	back := toV2(v1)
	back.TypeMeta = h.TypeMeta
	if !apiequality.Semantic.DeepEqual(back, h) {
		t.Errorf("round trip:\n got %+v\nwant %+v", back, h)
	}
	if h.Annotations["autoscaling.alpha.kubernetes.io/metrics"] != "" || len(h.Annotations) != 1 {
		t.Errorf("toV1 changed its input's annotations: %v", h.Annotations)
	}
}

// TestConversionDefaultsMetrics: a v1 autoscaler without a CPU target
// reads in v2 with the default target of 80%.
func TestConversionDefaultsMetrics(t *testing.T) {
	v1, err := toV1(&autoscalingv2.HorizontalPodAutoscaler{})
	if err != nil {
		t.Fatal(err)
	}
	v2 := toV2(v1)
	if len(v2.Spec.Metrics) != 1 || *v2.Spec.Metrics[0].Resource.Target.AverageUtilization != 80 || v2.Annotations != nil {
		t.Errorf("v2 of an empty v1: %+v", v2)
	}
}
