package autoscaling

import (
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/resource"
)

// The metric conversions between autoscaling/v1 (the forms kept in the
// annotations) and autoscaling/v2, as Kubernetes converts them.

func metricSpecToV1(in *autoscalingv2.MetricSpec) autoscalingv1.MetricSpec {
	out := autoscalingv1.MetricSpec{Type: autoscalingv1.MetricSourceType(in.Type)}
	if o := in.Object; o != nil {
		out.Object = &autoscalingv1.ObjectMetricSource{
			Target:     autoscalingv1.CrossVersionObjectReference(o.DescribedObject),
			MetricName: o.Metric.Name, Selector: o.Metric.Selector, AverageValue: o.Target.AverageValue,
		}
		if o.Target.Value != nil {
			out.Object.TargetValue = *o.Target.Value
		}
	}
	if p := in.Pods; p != nil {
		out.Pods = &autoscalingv1.PodsMetricSource{MetricName: p.Metric.Name, Selector: p.Metric.Selector}
		if p.Target.AverageValue != nil {
			out.Pods.TargetAverageValue = *p.Target.AverageValue
		}
	}
	if r := in.Resource; r != nil {
		out.Resource = &autoscalingv1.ResourceMetricSource{
			Name: r.Name, TargetAverageUtilization: r.Target.AverageUtilization, TargetAverageValue: r.Target.AverageValue,
		}
	}
	if c := in.ContainerResource; c != nil {
		out.ContainerResource = &autoscalingv1.ContainerResourceMetricSource{
			Name: c.Name, Container: c.Container,
			TargetAverageUtilization: c.Target.AverageUtilization, TargetAverageValue: c.Target.AverageValue,
		}
	}
	if e := in.External; e != nil {
		out.External = &autoscalingv1.ExternalMetricSource{
			MetricName: e.Metric.Name, MetricSelector: e.Metric.Selector,
			TargetValue: e.Target.Value, TargetAverageValue: e.Target.AverageValue,
		}
	}
	return out
}

func metricSpecToV2(in *autoscalingv1.MetricSpec) autoscalingv2.MetricSpec {
	out := autoscalingv2.MetricSpec{Type: autoscalingv2.MetricSourceType(in.Type)}
	if o := in.Object; o != nil {
		t := autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: new(o.TargetValue), AverageValue: o.AverageValue}
		if o.AverageValue != nil {
			t.Type, t.Value = autoscalingv2.AverageValueMetricType, nil
			if !o.TargetValue.IsZero() {
				t.Value = new(o.TargetValue)
			}
		}
		out.Object = &autoscalingv2.ObjectMetricSource{
			DescribedObject: autoscalingv2.CrossVersionObjectReference(o.Target),
			Metric:          autoscalingv2.MetricIdentifier{Name: o.MetricName, Selector: o.Selector}, Target: t,
		}
	}
	if p := in.Pods; p != nil {
		out.Pods = &autoscalingv2.PodsMetricSource{
			Metric: autoscalingv2.MetricIdentifier{Name: p.MetricName, Selector: p.Selector},
			Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: new(p.TargetAverageValue)},
		}
	}
	if r := in.Resource; r != nil {
		out.Resource = &autoscalingv2.ResourceMetricSource{Name: r.Name, Target: utilizationOrValue(r.TargetAverageUtilization, r.TargetAverageValue)}
	}
	if c := in.ContainerResource; c != nil {
		out.ContainerResource = &autoscalingv2.ContainerResourceMetricSource{
			Name: c.Name, Container: c.Container, Target: utilizationOrValue(c.TargetAverageUtilization, c.TargetAverageValue),
		}
	}
	if e := in.External; e != nil {
		t := autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: e.TargetValue, AverageValue: e.TargetAverageValue}
		if e.TargetValue == nil {
			t.Type = autoscalingv2.AverageValueMetricType
		}
		out.External = &autoscalingv2.ExternalMetricSource{
			Metric: autoscalingv2.MetricIdentifier{Name: e.MetricName, Selector: e.MetricSelector}, Target: t,
		}
	}
	return out
}

func utilizationOrValue(u *int32, v *resource.Quantity) autoscalingv2.MetricTarget {
	t := autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: u, AverageValue: v}
	if u == nil {
		t.Type = autoscalingv2.AverageValueMetricType
	}
	return t
}

func metricStatusToV1(in *autoscalingv2.MetricStatus) autoscalingv1.MetricStatus {
	out := autoscalingv1.MetricStatus{Type: autoscalingv1.MetricSourceType(in.Type)}
	deref := func(q *resource.Quantity) resource.Quantity {
		if q == nil {
			return resource.Quantity{}
		}
		return *q
	}
	if o := in.Object; o != nil {
		out.Object = &autoscalingv1.ObjectMetricStatus{
			Target:     autoscalingv1.CrossVersionObjectReference(o.DescribedObject),
			MetricName: o.Metric.Name, Selector: o.Metric.Selector,
			CurrentValue: deref(o.Current.Value), AverageValue: o.Current.AverageValue,
		}
	}
	if p := in.Pods; p != nil {
		out.Pods = &autoscalingv1.PodsMetricStatus{MetricName: p.Metric.Name, Selector: p.Metric.Selector, CurrentAverageValue: deref(p.Current.AverageValue)}
	}
	if r := in.Resource; r != nil {
		out.Resource = &autoscalingv1.ResourceMetricStatus{
			Name: r.Name, CurrentAverageUtilization: r.Current.AverageUtilization, CurrentAverageValue: deref(r.Current.AverageValue),
		}
	}
	if c := in.ContainerResource; c != nil {
		out.ContainerResource = &autoscalingv1.ContainerResourceMetricStatus{
			Name: c.Name, Container: c.Container,
			CurrentAverageUtilization: c.Current.AverageUtilization, CurrentAverageValue: deref(c.Current.AverageValue),
		}
	}
	if e := in.External; e != nil {
		out.External = &autoscalingv1.ExternalMetricStatus{
			MetricName: e.Metric.Name, MetricSelector: e.Metric.Selector,
			CurrentValue: deref(e.Current.Value), CurrentAverageValue: e.Current.AverageValue,
		}
	}
	return out
}

func metricStatusToV2(in *autoscalingv1.MetricStatus) autoscalingv2.MetricStatus {
	out := autoscalingv2.MetricStatus{Type: autoscalingv2.MetricSourceType(in.Type)}
	if o := in.Object; o != nil {
		out.Object = &autoscalingv2.ObjectMetricStatus{
			DescribedObject: autoscalingv2.CrossVersionObjectReference(o.Target),
			Metric:          autoscalingv2.MetricIdentifier{Name: o.MetricName, Selector: o.Selector},
			Current:         autoscalingv2.MetricValueStatus{Value: new(o.CurrentValue), AverageValue: o.AverageValue},
		}
	}
	if p := in.Pods; p != nil {
		out.Pods = &autoscalingv2.PodsMetricStatus{
			Metric:  autoscalingv2.MetricIdentifier{Name: p.MetricName, Selector: p.Selector},
			Current: autoscalingv2.MetricValueStatus{AverageValue: new(p.CurrentAverageValue)},
		}
	}
	if r := in.Resource; r != nil {
		out.Resource = &autoscalingv2.ResourceMetricStatus{Name: r.Name, Current: autoscalingv2.MetricValueStatus{
			AverageValue: new(r.CurrentAverageValue), AverageUtilization: r.CurrentAverageUtilization,
		}}
	}
	if c := in.ContainerResource; c != nil {
		out.ContainerResource = &autoscalingv2.ContainerResourceMetricStatus{Name: c.Name, Container: c.Container, Current: autoscalingv2.MetricValueStatus{
			AverageValue: new(c.CurrentAverageValue), AverageUtilization: c.CurrentAverageUtilization,
		}}
	}
	if e := in.External; e != nil {
		out.External = &autoscalingv2.ExternalMetricStatus{
			Metric:  autoscalingv2.MetricIdentifier{Name: e.MetricName, Selector: e.MetricSelector},
			Current: autoscalingv2.MetricValueStatus{Value: new(e.CurrentValue), AverageValue: e.CurrentAverageValue},
		}
	}
	return out
}
