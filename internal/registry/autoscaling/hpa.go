package autoscaling

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/printers"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

// hpaV2Strategy is the write logic of autoscalers, on the stored
// (autoscaling/v2) form; the v1 view runs it through conversion.
var hpaV2Strategy = strategy.Typed[*autoscalingv2.HorizontalPodAutoscaler]{
	PrepareCreate: func(h *autoscalingv2.HorizontalPodAutoscaler) {
		h.Status = autoscalingv2.HorizontalPodAutoscalerStatus{}
	},
	PrepareUpdate:  func(h, old *autoscalingv2.HorizontalPodAutoscaler) { h.Status = old.Status },
	Defaults:       defaultHPA,
	ValidateNew:    validateHPA,
	ValidateChange: validateHPAUpdate,
}

// hpaV2Status keeps the spec; metadata is written as sent, as Kubernetes'
// status strategy of autoscalers does.
var hpaV2Status = strategy.TypedStatus[*autoscalingv2.HorizontalPodAutoscaler]{
	PrepareUpdate:  func(h, old *autoscalingv2.HorizontalPodAutoscaler) { h.Spec = old.Spec },
	ValidateChange: validateHPAStatusUpdate,
}

func hpaV2Resource() *registry.Resource {
	return &registry.Resource{
		Group: "autoscaling", Version: "v2", Resource: "horizontalpodautoscalers", Kind: "HorizontalPodAutoscaler",
		ListKind: "HorizontalPodAutoscalerList", Singular: "horizontalpodautoscaler", ShortNames: []string{"hpa"},
		Categories: []string{"all"}, Namespaced: true,
		New:             func() runtime.Object { return &autoscalingv2.HorizontalPodAutoscaler{} },
		NewList:         func() runtime.Object { return &autoscalingv2.HorizontalPodAutoscalerList{} },
		Strategy:        hpaV2Strategy,
		Status:          hpaV2Status,
		Attrs:           strategy.Attrs[*autoscalingv2.HorizontalPodAutoscaler](true, nil),
		FieldLabelError: strategy.UnknownFieldLabel,
		Table:           printers.For("autoscaling", "HorizontalPodAutoscaler"),
	}
}

// defaultHPA applies autoscaling/v2's defaults: one replica at least, a
// CPU utilization target of 80% when no metric is named, and the
// scaling rules of a behavior that names only some.
func defaultHPA(h *autoscalingv2.HorizontalPodAutoscaler) {
	s := &h.Spec
	if s.MinReplicas == nil {
		s.MinReplicas = new(int32(1))
	}
	if len(s.Metrics) == 0 {
		s.Metrics = []autoscalingv2.MetricSpec{cpuUtilization(defaultCPUUtilization)}
	}
	if b := s.Behavior; b != nil {
		b.ScaleUp = completeRules(b.ScaleUp, scaleUpDefaults())
		b.ScaleDown = completeRules(b.ScaleDown, scaleDownDefaults())
	}
}

func scaleUpDefaults() *autoscalingv2.HPAScalingRules {
	return &autoscalingv2.HPAScalingRules{
		StabilizationWindowSeconds: new(int32(0)),
		SelectPolicy:               new(autoscalingv2.MaxChangePolicySelect),
		Policies: []autoscalingv2.HPAScalingPolicy{
			{Type: autoscalingv2.PodsScalingPolicy, Value: 4, PeriodSeconds: 15},
			{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15},
		},
	}
}

func scaleDownDefaults() *autoscalingv2.HPAScalingRules {
	return &autoscalingv2.HPAScalingRules{
		SelectPolicy: new(autoscalingv2.MaxChangePolicySelect),
		Policies:     []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15}},
	}
}

// completeRules fills what from leaves unset with def's values.
func completeRules(from, def *autoscalingv2.HPAScalingRules) *autoscalingv2.HPAScalingRules {
	if from == nil {
		return def
	}
	if from.SelectPolicy != nil {
		def.SelectPolicy = from.SelectPolicy
	}
	if from.StabilizationWindowSeconds != nil {
		def.StabilizationWindowSeconds = from.StabilizationWindowSeconds
	}
	if from.Policies != nil {
		def.Policies = from.Policies
	}
	if from.Tolerance != nil {
		def.Tolerance = from.Tolerance
	}
	return def
}

func validateHPAStatusUpdate(h, old *autoscalingv2.HorizontalPodAutoscaler) field.ErrorList {
	errs := strategy.ValidateMetaUpdate(&h.ObjectMeta, &old.ObjectMeta)
	s, p := &h.Status, strategy.StatusPath
	for i, c := range s.Conditions {
		if c.ObservedGeneration != nil {
			errs = append(errs, nonNegative(*c.ObservedGeneration, p.Child("conditions").Index(i).Child("observedGeneration"))...)
		}
	}
	errs = append(errs, nonNegative(int64(s.CurrentReplicas), p.Child("currentReplicas"))...)
	return append(errs, nonNegative(int64(s.DesiredReplicas), p.Child("desiredReplicas"))...)
}

// hpaV2StoredStrategy defaults the autoscalers read from storage, as
// kube-apiserver does with every object it decodes: one written through
// autoscaling/v1 gets v2's defaults (its behavior's rules) when read
// (registry.StoredDefaulter).
type hpaV2StoredStrategy struct {
	strategy.Typed[*autoscalingv2.HorizontalPodAutoscaler]
}

func (hpaV2StoredStrategy) DefaultStored(obj runtime.Object) {
	if h, ok := obj.(*autoscalingv2.HorizontalPodAutoscaler); ok {
		defaultHPA(h)
	}
}
