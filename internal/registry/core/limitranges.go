package core

import (
	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/printers"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/podspec"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

// limitRangesResource serves limitranges: the objects, their defaults and
// validation. Applying them to pods and claims (the LimitRanger admission)
// is not part of this resource.
func limitRangesResource() *registry.Resource {
	return &registry.Resource{
		Version: "v1", Resource: "limitranges", Kind: "LimitRange", ListKind: "LimitRangeList",
		Singular: "limitrange", ShortNames: []string{"limits"}, Namespaced: true,
		NoGeneration: true, // as kube-apiserver: no metadata.generation
		New:          func() runtime.Object { return &corev1.LimitRange{} },
		NewList:      func() runtime.Object { return &corev1.LimitRangeList{} },
		Strategy: limitRangeStrategy{strategy.CreateOnUpdate[*corev1.LimitRange]{Typed: strategy.Typed[*corev1.LimitRange]{
			Defaults:    defaultLimitRange,
			ValidateNew: validateLimitRange,
			ValidateChange: func(lr, old *corev1.LimitRange) field.ErrorList {
				// As kube-apiserver: an update is checked as a new object,
				// after the metadata checks every update gets (uid,
				// name... immutable).
				errs := strategy.ValidateMetaUpdate(&lr.ObjectMeta, &old.ObjectMeta)
				return append(errs, validateLimitRange(lr)...)
			},
		}}},
		Attrs: strategy.Attrs[*corev1.LimitRange](true, nil),
		Table: printers.For("", "LimitRange"),
	}
}

// limitRangeStrategy names a LimitRange created without a name or a
// generateName with a random UUID, as Kubernetes does
// (registry.NameDefaulter).
type limitRangeStrategy struct {
	strategy.CreateOnUpdate[*corev1.LimitRange]
}

func (limitRangeStrategy) DefaultName() string { return string(uuid.NewUUID()) }

// defaultLimitRange fills the defaults of Container limits (the default
// limit from max, the default request from the default limit, else from
// min) and rounds every quantity up to milli-units.
func defaultLimitRange(lr *corev1.LimitRange) {
	for i := range lr.Spec.Limits {
		item := &lr.Spec.Limits[i]
		if item.Type == corev1.LimitTypeContainer {
			if item.Default == nil {
				item.Default = corev1.ResourceList{}
			}
			if item.DefaultRequest == nil {
				item.DefaultRequest = corev1.ResourceList{}
			}
			fillMissing(item.Default, item.Max)
			fillMissing(item.DefaultRequest, item.Default)
			fillMissing(item.DefaultRequest, item.Min)
		}
		for _, l := range []corev1.ResourceList{item.Max, item.Min, item.Default, item.DefaultRequest, item.MaxLimitRequestRatio} {
			podspec.RoundResources(l)
		}
	}
}

// fillMissing copies into dst the quantities of src it does not have.
func fillMissing(dst, src corev1.ResourceList) {
	for k, v := range src {
		if _, ok := dst[k]; !ok {
			dst[k] = v.DeepCopy()
		}
	}
}

func validateLimitRange(lr *corev1.LimitRange) field.ErrorList {
	errs := strategy.ValidateMeta(&lr.ObjectMeta, true, apivalidation.NameIsDNSSubdomain)
	types := map[corev1.LimitType]bool{}
	p := field.NewPath("spec", "limits")
	for i := range lr.Spec.Limits {
		item, idx := &lr.Spec.Limits[i], p.Index(i)
		errs = append(errs, validateLimitType(item.Type, idx.Child("type"))...)
		if types[item.Type] {
			errs = append(errs, field.Duplicate(idx.Child("type"), item.Type))
		}
		types[item.Type] = true
		errs = append(errs, validateLimitRangeItem(item, idx)...)
	}
	return errs
}

var standardLimitTypes = []corev1.LimitType{corev1.LimitTypePod, corev1.LimitTypeContainer, corev1.LimitTypePersistentVolumeClaim}

func validateLimitType(t corev1.LimitType, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(string(t)) {
		errs = append(errs, field.Invalid(p, t, msg))
	}
	if len(errs) > 0 {
		return errs
	}
	if !hasDomain(string(t)) && !containsLimitType(t) {
		return field.ErrorList{field.Invalid(p, t, "must be a standard limit type or fully qualified")}
	}
	return nil
}

func containsLimitType(t corev1.LimitType) bool {
	for _, s := range standardLimitTypes {
		if s == t {
			return true
		}
	}
	return false
}

// limitResourceName checks a resource name of an item: Pod and Container
// items name what containers may request, other types any resource.
func limitResourceName(t corev1.LimitType, name corev1.ResourceName, p *field.Path) field.ErrorList {
	if t == corev1.LimitTypePod || t == corev1.LimitTypeContainer {
		return validateContainerResourceName(name, p)
	}
	return validateResourceName(name, p)
}
