package node

import (
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/printers"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/podspec"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

func runtimeClassesResource() *registry.Resource {
	return &registry.Resource{
		Group: "node.k8s.io", Version: "v1", Resource: "runtimeclasses", Kind: "RuntimeClass",
		ListKind: "RuntimeClassList", Singular: "runtimeclass",
		New:     func() runtime.Object { return &nodev1.RuntimeClass{} },
		NewList: func() runtime.Object { return &nodev1.RuntimeClassList{} },
		Strategy: strategy.Typed[*nodev1.RuntimeClass]{
			ValidateNew: validateRuntimeClass,
			ValidateChange: func(rc, old *nodev1.RuntimeClass) field.ErrorList {
				errs := strategy.ValidateMetaUpdate(&rc.ObjectMeta, &old.ObjectMeta)
				return append(errs, apivalidation.ValidateImmutableField(rc.Handler, old.Handler, field.NewPath("handler"))...)
			},
		},
		Attrs:              strategy.Attrs[*nodev1.RuntimeClass](true, nil),
		DefaultFieldLabels: true,
		Table:              printers.For("node.k8s.io", "RuntimeClass"),
	}
}

func validateRuntimeClass(rc *nodev1.RuntimeClass) field.ErrorList {
	errs := strategy.ValidateMeta(&rc.ObjectMeta, false, apivalidation.NameIsDNSSubdomain)
	for _, msg := range apivalidation.NameIsDNSLabel(rc.Handler, false) {
		errs = append(errs, field.Invalid(field.NewPath("handler"), rc.Handler, msg))
	}
	if rc.Overhead != nil {
		errs = append(errs, podspec.ValidateResources(&corev1.ResourceRequirements{Limits: rc.Overhead.PodFixed}, field.NewPath("overhead"))...)
	}
	if s := rc.Scheduling; s != nil {
		p := field.NewPath("scheduling")
		errs = append(errs, metav1validation.ValidateLabels(s.NodeSelector, p.Child("nodeSelector"))...)
		errs = append(errs, podspec.ValidateTolerations(s.Tolerations, p.Child("tolerations"))...)
	}
	return errs
}
