package podautoscaler

import (
	"errors"
	"fmt"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
)

// Pods and Object metrics come from the custom metrics API
// (custom.metrics.k8s.io), External ones from the external metrics API
// (external.metrics.k8s.io), which adapters (prometheus-adapter, KEDA)
// serve through aggregation. setpoint serves neither, so these metrics
// fail as they do on a cluster without an adapter, with
// kube-controller-manager's reasons and messages; the autoscaler still
// scales on its other metrics while they would scale it up.

// errNoCustomMetrics is the custom metrics client's error when discovery
// finds no custom metrics API.
var errNoCustomMetrics = errors.New("no custom metrics API (custom.metrics.k8s.io) registered")

// unsupportedMetric fails a Pods, Object or External metric.
func (r *reconciler) unsupportedMetric(hpa *autoscalingv2.HorizontalPodAutoscaler, spec autoscalingv2.MetricSpec) (int32, string, autoscalingv2.HorizontalPodAutoscalerCondition, error) {
	custom := fmt.Errorf("unable to fetch metrics from custom metrics API: %w", errNoCustomMetrics)
	switch spec.Type {
	case autoscalingv2.PodsMetricSourceType:
		if spec.Pods == nil {
			break
		}
		err := fmt.Errorf("unable to get metric %s: %w", spec.Pods.Metric.Name, custom)
		return 0, "", r.unableCondition(hpa, "FailedGetPodsMetric", err), fmt.Errorf("failed to get pods metric value: %w", err)
	case autoscalingv2.ObjectMetricSourceType:
		if spec.Object == nil {
			break
		}
		o := spec.Object
		err := fmt.Errorf("unable to get metric %s on %s %s/%s: %w", o.Metric.Name, o.DescribedObject.Kind, hpa.Namespace, o.DescribedObject.Name, custom)
		cond := r.unableCondition(hpa, "FailedGetObjectMetric", err)
		if o.Target.Type == autoscalingv2.AverageValueMetricType {
			err = fmt.Errorf("failed to get %s object metric: %w", o.Metric.Name, err)
		}
		return 0, "", cond, fmt.Errorf("failed to get object metric value: %w", err)
	case autoscalingv2.ExternalMetricSourceType:
		if spec.External == nil {
			break
		}
		e := spec.External
		// The external metrics client asks the group directly; a cluster
		// without it answers 404.
		fetch := fmt.Errorf("unable to fetch metrics from external metrics API: the server could not find the requested resource (get %s.external.metrics.k8s.io)", e.Metric.Name)
		err := fmt.Errorf("unable to get external metric %s/%s/%+v: %s", hpa.Namespace, e.Metric.Name, e.Metric.Selector, fetch)
		cond := r.unableCondition(hpa, "FailedGetExternalMetric", err)
		if e.Target.AverageValue != nil {
			err = fmt.Errorf("failed to get %s external metric: %w", e.Metric.Name, err)
		} else {
			err = fmt.Errorf("failed to get external metric %s: %w", e.Metric.Name, err)
		}
		return 0, "", cond, fmt.Errorf("failed to get %s external metric value: %w", e.Metric.Name, err)
	}
	err := fmt.Errorf("unknown metric source type %q%w", string(spec.Type), errSpec)
	return 0, "", r.unableCondition(hpa, "InvalidMetricSourceType", err), err
}
