package builtin

import (
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/printers"
	"github.com/setpoint-dev/setpoint/internal/registry"
)

func replicaSetsResource() *registry.Resource {
	return &registry.Resource{
		Group: "apps", Version: "v1", Resource: "replicasets", Kind: "ReplicaSet", ListKind: "ReplicaSetList",
		Singular: "replicaset", ShortNames: []string{"rs"}, Categories: []string{"all"}, Namespaced: true,
		New:     func() runtime.Object { return &appsv1.ReplicaSet{} },
		NewList: func() runtime.Object { return &appsv1.ReplicaSetList{} },
		Strategy: typed[*appsv1.ReplicaSet]{
			prepareCreate:  func(rs *appsv1.ReplicaSet) { rs.Status = appsv1.ReplicaSetStatus{} },
			prepareUpdate:  func(rs, old *appsv1.ReplicaSet) { rs.Status = old.Status },
			defaults:       defaultReplicaSet,
			validate:       validateReplicaSet,
			validateUpdate: validateReplicaSetUpdate,
		},
		Status: typedStatus[*appsv1.ReplicaSet]{
			prepareUpdate: func(rs, old *appsv1.ReplicaSet) {
				rs.Spec = old.Spec
				resetMetaForStatus(&rs.ObjectMeta, &old.ObjectMeta)
			},
			validateUpdate: validateReplicaSetStatusUpdate,
		},
		Scale: replicasScale[*appsv1.ReplicaSet]{
			get: func(rs *appsv1.ReplicaSet) (*int32, int32, string, error) {
				sel, err := selectorString(rs.Spec.Selector)
				return rs.Spec.Replicas, rs.Status.Replicas, sel, err
			},
			set: func(rs *appsv1.ReplicaSet, n int32) { rs.Spec.Replicas = &n },
		},
		Attrs: attrsFor(true, func(rs *appsv1.ReplicaSet, set fields.Set) {
			set["status.replicas"] = strconv.Itoa(int(rs.Status.Replicas))
		}),
		Table: printers.For("apps", "ReplicaSet"),
	}
}

func defaultReplicaSet(rs *appsv1.ReplicaSet) {
	if rs.Spec.Replicas == nil {
		rs.Spec.Replicas = new(int32(1))
	}
	defaultPodSpec(&rs.Spec.Template.Spec)
}

func validateReplicaSet(rs *appsv1.ReplicaSet) field.ErrorList {
	errs := validateMeta(&rs.ObjectMeta, true, apivalidation.NameIsDNSSubdomain)
	return append(errs, validateReplicaSetSpec(&rs.Spec)...)
}

func validateReplicaSetSpec(s *appsv1.ReplicaSetSpec) field.ErrorList {
	errs := validateNonNegative(specPath.Child("replicas"), s.Replicas)
	errs = append(errs, apivalidation.ValidateNonnegativeField(int64(s.MinReadySeconds), specPath.Child("minReadySeconds"))...)
	return append(errs, validateSelectorAndTemplate(s.Selector, &s.Template, "replicaset", specPath)...)
}

// validateReplicaSetUpdate also makes spec.selector immutable, as apps/v1
// does.
func validateReplicaSetUpdate(rs, old *appsv1.ReplicaSet) field.ErrorList {
	errs := validateMetaUpdate(&rs.ObjectMeta, &old.ObjectMeta)
	errs = append(errs, validateReplicaSetSpec(&rs.Spec)...)
	return append(errs, apivalidation.ValidateImmutableField(rs.Spec.Selector, old.Spec.Selector, specPath.Child("selector"))...)
}

func validateReplicaSetStatusUpdate(rs, old *appsv1.ReplicaSet) field.ErrorList {
	errs := validateMetaUpdate(&rs.ObjectMeta, &old.ObjectMeta)
	s := &rs.Status
	sp := field.NewPath("status")
	errs = append(errs, replicaCounts{
		replicas: s.Replicas, ready: s.ReadyReplicas, available: s.AvailableReplicas,
		others: map[string]int32{"fullyLabeledReplicas": s.FullyLabeledReplicas},
	}.validate(sp)...)
	errs = append(errs, apivalidation.ValidateNonnegativeField(s.ObservedGeneration, sp.Child("observedGeneration"))...)
	errs = append(errs, validateNonNegative(sp.Child("terminatingReplicas"), s.TerminatingReplicas)...)
	if s.FullyLabeledReplicas > s.Replicas {
		errs = append(errs, field.Invalid(sp.Child("fullyLabeledReplicas"), s.FullyLabeledReplicas, "cannot be greater than status.replicas"))
	}
	return errs
}
