package autoscaling

import (
	"fmt"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/printers"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

type (
	hpaV1 = autoscalingv1.HorizontalPodAutoscaler
	hpaV2 = autoscalingv2.HorizontalPodAutoscaler
)

// hpaV1Resource serves autoscaling/v1 autoscalers as a view of the
// autoscaling/v2 storage.
func hpaV1Resource() *registry.Resource {
	return &registry.Resource{
		Group: "autoscaling", Version: "v1", Resource: "horizontalpodautoscalers", Kind: "HorizontalPodAutoscaler",
		ListKind: "HorizontalPodAutoscalerList", Singular: "horizontalpodautoscaler", ShortNames: []string{"hpa"},
		Categories: []string{"all"}, Namespaced: true,
		New:     func() runtime.Object { return &hpaV1{} },
		NewList: func() runtime.Object { return &autoscalingv1.HorizontalPodAutoscalerList{} },
		Strategy: strategy.Typed[*hpaV1]{
			PrepareCreate: func(h *hpaV1) { throughV2(h, hpaV2Strategy.PrepareCreate) },
			PrepareUpdate: func(h, old *hpaV1) { pairThroughV2(h, old, hpaV2Strategy.PrepareUpdate) },
			// Only v1's own default: v2's apply when the stored form is
			// read, as kube-apiserver defaults the v2 objects it decodes.
			Defaults: func(h *hpaV1) {
				if h.Spec.MinReplicas == nil {
					h.Spec.MinReplicas = new(int32(1))
				}
			},
			ValidateNew: func(h *hpaV1) field.ErrorList { return validateHPA(toV2(h)) },
			ValidateChange: func(h, old *hpaV1) field.ErrorList {
				return validateHPAUpdate(toV2(h), toV2(old))
			},
		},
		Status: strategy.TypedStatus[*hpaV1]{
			PrepareUpdate: func(h, old *hpaV1) { pairThroughV2(h, old, hpaV2Status.PrepareUpdate) },
			ValidateChange: func(h, old *hpaV1) field.ErrorList {
				return validateHPAStatusUpdate(toV2(h), toV2(old))
			},
		},
		View: &registry.StorageView{
			Group: "autoscaling", Version: "v2", Resource: "horizontalpodautoscalers", Kind: "HorizontalPodAutoscaler",
			New: func() runtime.Object { return &hpaV2{} },
			ToStorage: func(obj runtime.Object) (runtime.Object, error) {
				h, ok := obj.(*hpaV1)
				if !ok {
					return nil, fmt.Errorf("autoscaling: store %T as autoscaling/v2", obj)
				}
				return toV2(h), nil
			},
			FromStorage: func(stored runtime.Object) (runtime.Object, error) {
				h, ok := stored.(*hpaV2)
				if !ok {
					return nil, fmt.Errorf("autoscaling: read %T as autoscaling/v1", stored)
				}
				defaultHPA(h)
				return toV1(h)
			},
		},
		Attrs:           strategy.Attrs[*hpaV1](true, nil),
		FieldLabelError: strategy.UnknownFieldLabel,
		Table:           v1Table{printers.For("autoscaling", "HorizontalPodAutoscaler")},
	}
}

// throughV2 runs fn on the v2 form of h and writes the result back into h.
func throughV2(h *hpaV1, fn func(*hpaV2)) {
	h2 := toV2(h)
	fn(h2)
	setFromV2(h, h2)
}

func pairThroughV2(h, old *hpaV1, fn func(h, old *hpaV2)) {
	h2 := toV2(h)
	fn(h2, toV2(old))
	setFromV2(h, h2)
}

func setFromV2(h *hpaV1, h2 *hpaV2) {
	back, err := toV1(h2)
	if err != nil {
		return // only a JSON encoding failure, which typed values never cause
	}
	back.TypeMeta = h.TypeMeta
	*h = *back
}

// v1Table prints autoscaling/v1 objects with the v2 columns, as
// kube-apiserver prints both versions from one internal form.
type v1Table struct{ v2 registry.TableConvertor }

func (t v1Table) Columns() []metav1.TableColumnDefinition { return t.v2.Columns() }

func (t v1Table) Cells(obj runtime.Object) ([]interface{}, error) {
	h, ok := obj.(*hpaV1)
	if !ok {
		return nil, fmt.Errorf("autoscaling: cannot print %T as %T", obj, h)
	}
	return t.v2.Cells(toV2(h))
}
