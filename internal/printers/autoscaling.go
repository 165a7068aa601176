package printers

import (
	"fmt"
	"strings"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// autoscalingTable returns the table of an autoscaling/v2 kind, nil for
// none. (autoscaling/v1 objects are converted to v2 and printed the same,
// as kube-apiserver prints its internal form for both.)
func autoscalingTable(kind string, now func() time.Time) registry.TableConvertor {
	if kind == "HorizontalPodAutoscaler" {
		return newTable(hpaColumns, hpaCells, now)
	}
	return nil
}

var hpaColumns = []metav1.TableColumnDefinition{
	nameColumn(0),
	column("Reference", "string", "The target resource to scale."),
	column("Targets", "string", "The specifications for which to use to calculate the desired replica count."),
	column("MinPods", "string", "The lower limit for the number of replicas to which the autoscaler can scale down."),
	column("MaxPods", "string", "The upper limit for the number of replicas to which the autoscaler can scale up."),
	column("Replicas", "string", "The current number of replicas of pods managed by this autoscaler."),
	ageColumn,
}

func hpaCells(h *autoscalingv2.HorizontalPodAutoscaler, now time.Time) []interface{} {
	minPods := "<unset>"
	if h.Spec.MinReplicas != nil {
		minPods = fmt.Sprintf("%d", *h.Spec.MinReplicas)
	}
	ref := h.Spec.ScaleTargetRef.Kind + "/" + h.Spec.ScaleTargetRef.Name
	return []interface{}{
		h.Name, ref, hpaTargets(h.Spec.Metrics, h.Status.CurrentMetrics), minPods,
		int64(h.Spec.MaxReplicas), int64(h.Status.CurrentReplicas), age(h.CreationTimestamp, now),
	}
}

// hpaTargets renders "current/target" per metric, the first two of them,
// as kubectl does.
func hpaTargets(specs []autoscalingv2.MetricSpec, statuses []autoscalingv2.MetricStatus) string {
	if len(specs) == 0 {
		return "<none>"
	}
	var list []string
	for i := range specs {
		var st *autoscalingv2.MetricStatus
		if i < len(statuses) {
			st = &statuses[i]
		}
		list = append(list, hpaTarget(&specs[i], st))
	}
	if len(list) > 2 {
		return fmt.Sprintf("%s + %d more...", strings.Join(list[:2], ", "), len(list)-2)
	}
	return strings.Join(list, ", ")
}

func hpaTarget(spec *autoscalingv2.MetricSpec, st *autoscalingv2.MetricStatus) string {
	const unknown = "<unknown>"
	switch spec.Type {
	case autoscalingv2.ExternalMetricSourceType:
		return valueTarget(spec.External.Target, func() *autoscalingv2.MetricValueStatus {
			if st != nil && st.External != nil {
				return &st.External.Current
			}
			return nil
		}())
	case autoscalingv2.ObjectMetricSourceType:
		return valueTarget(spec.Object.Target, func() *autoscalingv2.MetricValueStatus {
			if st != nil && st.Object != nil {
				return &st.Object.Current
			}
			return nil
		}())
	case autoscalingv2.PodsMetricSourceType:
		current := unknown
		if st != nil && st.Pods != nil {
			current = st.Pods.Current.AverageValue.String()
		}
		return fmt.Sprintf("%s/%s", current, spec.Pods.Target.AverageValue.String())
	case autoscalingv2.ResourceMetricSourceType:
		var cur *autoscalingv2.MetricValueStatus
		if st != nil && st.Resource != nil {
			cur = &st.Resource.Current
		}
		return spec.Resource.Name.String() + ": " + resourceTarget(spec.Resource.Target, cur)
	case autoscalingv2.ContainerResourceMetricSourceType:
		var cur *autoscalingv2.MetricValueStatus
		if st != nil && st.ContainerResource != nil {
			cur = &st.ContainerResource.Current
		}
		return spec.ContainerResource.Name.String() + ": " + resourceTarget(spec.ContainerResource.Target, cur)
	}
	return "<unknown type>"
}

// valueTarget renders an object or external metric: an average value
// "(avg)", else a value.
func valueTarget(t autoscalingv2.MetricTarget, cur *autoscalingv2.MetricValueStatus) string {
	current := "<unknown>"
	if t.AverageValue != nil {
		if cur != nil && cur.AverageValue != nil {
			current = cur.AverageValue.String()
		}
		return fmt.Sprintf("%s/%s (avg)", current, t.AverageValue.String())
	}
	if cur != nil {
		current = cur.Value.String()
	}
	return fmt.Sprintf("%s/%s", current, t.Value.String())
}

// resourceTarget renders a resource metric: an average value, else a
// utilization ("<auto>" when none is set).
func resourceTarget(t autoscalingv2.MetricTarget, cur *autoscalingv2.MetricValueStatus) string {
	current := "<unknown>"
	if t.AverageValue != nil {
		if cur != nil {
			current = cur.AverageValue.String()
		}
		return fmt.Sprintf("%s/%s", current, t.AverageValue.String())
	}
	if cur != nil && cur.AverageUtilization != nil {
		current = fmt.Sprintf("%d%%", *cur.AverageUtilization)
	}
	target := "<auto>"
	if t.AverageUtilization != nil {
		target = fmt.Sprintf("%d%%", *t.AverageUtilization)
	}
	return fmt.Sprintf("%s/%s", current, target)
}
