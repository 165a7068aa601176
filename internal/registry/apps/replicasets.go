package apps

import (
	appsv1 "k8s.io/api/apps/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/printers"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/podspec"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

func replicaSetsResource() *registry.Resource {
	return &registry.Resource{
		Group: "apps", Version: "v1", Resource: "replicasets", Kind: "ReplicaSet", ListKind: "ReplicaSetList",
		Singular: "replicaset", ShortNames: []string{"rs"}, Categories: []string{"all"}, Namespaced: true,
		New:     func() runtime.Object { return &appsv1.ReplicaSet{} },
		NewList: func() runtime.Object { return &appsv1.ReplicaSetList{} },
		Strategy: strategy.Typed[*appsv1.ReplicaSet]{
			PrepareCreate: func(rs *appsv1.ReplicaSet) {
				rs.Status = appsv1.ReplicaSetStatus{}
				podspec.DropDisabledTemplateFields(&rs.Spec.Template, nil)
			},
			PrepareUpdate: func(rs, old *appsv1.ReplicaSet) {
				rs.Status = old.Status
				podspec.DropDisabledTemplateFields(&rs.Spec.Template, &old.Spec.Template)
			},
			Defaults:       defaultReplicaSet,
			ValidateNew:    validateReplicaSet,
			ValidateChange: validateReplicaSetUpdate,
			Warn:           replicaSetWarnings,
		},
		Status: strategy.TypedStatus[*appsv1.ReplicaSet]{
			PrepareUpdate: func(rs, old *appsv1.ReplicaSet) {
				rs.Spec = old.Spec
				// metadata changes stay, as in kube-apiserver: its status
				// strategy for the kind resets the spec only
			},
			ValidateChange: validateReplicaSetStatusUpdate,
		},
		Scale: strategy.ReplicasScale[*appsv1.ReplicaSet]{
			Get: func(rs *appsv1.ReplicaSet) (*int32, int32, string, error) {
				sel, err := strategy.SelectorString(rs.Spec.Selector)
				return rs.Spec.Replicas, rs.Status.Replicas, sel, err
			},
			Set: func(rs *appsv1.ReplicaSet, n int32) { rs.Spec.Replicas = &n },
		},
		// kube-apiserver computes status.replicas for replica sets but
		// refuses it in a field selector: only name and namespace.
		Attrs:           strategy.Attrs[*appsv1.ReplicaSet](true, nil),
		FieldLabelError: strategy.UnknownFieldLabel,
		Table:           printers.For("apps", "ReplicaSet"),
	}
}

func defaultReplicaSet(rs *appsv1.ReplicaSet) {
	if rs.Spec.Replicas == nil {
		rs.Spec.Replicas = new(int32(1))
	}
	podspec.DefaultPodSpec(&rs.Spec.Template.Spec)
}

func validateReplicaSet(rs *appsv1.ReplicaSet) field.ErrorList {
	errs := strategy.ValidateMeta(&rs.ObjectMeta, true, apivalidation.NameIsDNSSubdomain)
	return append(errs, validateReplicaSetSpec(&rs.Spec)...)
}

func validateReplicaSetSpec(s *appsv1.ReplicaSetSpec) field.ErrorList {
	errs := strategy.ValidateNonNegative(strategy.SpecPath.Child("replicas"), s.Replicas)
	errs = append(errs, apivalidation.ValidateNonnegativeField(int64(s.MinReadySeconds), strategy.SpecPath.Child("minReadySeconds"))...)
	return append(errs, podspec.ValidateSelectorAndTemplate(s.Selector, &s.Template, "replicaset", strategy.SpecPath)...)
}

// validateReplicaSetUpdate also makes spec.selector immutable, as apps/v1
// does.
func validateReplicaSetUpdate(rs, old *appsv1.ReplicaSet) field.ErrorList {
	errs := strategy.ValidateMetaUpdate(&rs.ObjectMeta, &old.ObjectMeta)
	errs = append(errs, validateReplicaSetSpec(&rs.Spec)...)
	return append(errs, apivalidation.ValidateImmutableField(rs.Spec.Selector, old.Spec.Selector, strategy.SpecPath.Child("selector"))...)
}

func validateReplicaSetStatusUpdate(rs, old *appsv1.ReplicaSet) field.ErrorList {
	errs := strategy.ValidateMetaUpdate(&rs.ObjectMeta, &old.ObjectMeta)
	s := &rs.Status
	sp := field.NewPath("status")
	errs = append(errs, podspec.ReplicaCounts{
		Replicas: s.Replicas, Ready: s.ReadyReplicas, Available: s.AvailableReplicas,
		Others: map[string]int32{"fullyLabeledReplicas": s.FullyLabeledReplicas},
	}.Validate(sp)...)
	errs = append(errs, apivalidation.ValidateNonnegativeField(s.ObservedGeneration, sp.Child("observedGeneration"))...)
	errs = append(errs, strategy.ValidateNonNegative(sp.Child("terminatingReplicas"), s.TerminatingReplicas)...)
	if s.FullyLabeledReplicas > s.Replicas {
		errs = append(errs, field.Invalid(sp.Child("fullyLabeledReplicas"), s.FullyLabeledReplicas, "cannot be greater than status.replicas"))
	}
	return errs
}
