package core

import (
	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/printers"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/podspec"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

// resourceQuotasResource serves resourcequotas: the objects, their
// validation and the status subresource. Enforcing them at admission and
// computing their usage (the quota controller) are not part of it.
func resourceQuotasResource() *registry.Resource {
	return &registry.Resource{
		Version: "v1", Resource: "resourcequotas", Kind: "ResourceQuota", ListKind: "ResourceQuotaList",
		Singular: "resourcequota", ShortNames: []string{"quota"}, Namespaced: true,
		NoGeneration:        true, // as kube-apiserver: no metadata.generation
		ReturnDeletedObject: true,
		New:                 func() runtime.Object { return &corev1.ResourceQuota{} },
		NewList:             func() runtime.Object { return &corev1.ResourceQuotaList{} },
		Strategy: strategy.Typed[*corev1.ResourceQuota]{
			PrepareCreate:  func(q *corev1.ResourceQuota) { q.Status = corev1.ResourceQuotaStatus{} },
			PrepareUpdate:  func(q, old *corev1.ResourceQuota) { q.Status = old.Status },
			Defaults:       defaultResourceQuota,
			ValidateNew:    validateResourceQuota,
			ValidateChange: validateResourceQuotaUpdate,
			Warn:           resourceQuotaWarnings,
		},
		// As kube-apiserver, the status endpoint keeps the spec and
		// writes status and metadata.
		Status: strategy.TypedStatus[*corev1.ResourceQuota]{
			PrepareUpdate: func(q, old *corev1.ResourceQuota) { q.Spec = old.Spec },
			ValidateChange: func(q, old *corev1.ResourceQuota) field.ErrorList {
				errs := strategy.ValidateMetaUpdate(&q.ObjectMeta, &old.ObjectMeta)
				return append(errs, validateQuotaStatus(&q.Status)...)
			},
		},
		Attrs: strategy.Attrs[*corev1.ResourceQuota](true, nil),
		Table: printers.For("", "ResourceQuota"),
	}
}

// defaultResourceQuota rounds every quantity up to milli-units.
func defaultResourceQuota(q *corev1.ResourceQuota) {
	podspec.RoundResources(q.Spec.Hard)
	podspec.RoundResources(q.Status.Hard)
	podspec.RoundResources(q.Status.Used)
}

func validateResourceQuota(q *corev1.ResourceQuota) field.ErrorList {
	errs := strategy.ValidateMeta(&q.ObjectMeta, true, apivalidation.NameIsDNSSubdomain)
	errs = append(errs, validateQuotaSpec(&q.Spec)...)
	return append(errs, validateQuotaStatus(&q.Status)...)
}

// validateResourceQuotaUpdate also keeps spec.scopes fixed.
func validateResourceQuotaUpdate(q, old *corev1.ResourceQuota) field.ErrorList {
	errs := strategy.ValidateMetaUpdate(&q.ObjectMeta, &old.ObjectMeta)
	errs = append(errs, validateQuotaSpec(&q.Spec)...)
	if !sets.New(q.Spec.Scopes...).Equal(sets.New(old.Spec.Scopes...)) {
		errs = append(errs, field.Invalid(strategy.SpecPath.Child("scopes"), q.Spec.Scopes, apivalidation.FieldImmutableErrorMsg))
	}
	return errs
}

// validateQuotaList checks the names and quantities of spec.hard,
// status.hard or status.used.
func validateQuotaList(l corev1.ResourceList, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, k := range strategy.SortedKeys(l) {
		kp := p.Key(string(k))
		errs = append(errs, validateQuotaResourceName(k, kp)...)
		errs = append(errs, validateQuantityFor(k, l[k], kp)...)
	}
	return errs
}

func validateQuotaSpec(s *corev1.ResourceQuotaSpec) field.ErrorList {
	errs := validateQuotaList(s.Hard, strategy.SpecPath.Child("hard"))
	errs = append(errs, validateQuotaScopes(s)...)
	if s.ScopeSelector != nil {
		errs = append(errs, validateScopeSelector(s, strategy.SpecPath.Child("scopeSelector", "matchExpressions"))...)
	}
	return errs
}

func validateQuotaStatus(s *corev1.ResourceQuotaStatus) field.ErrorList {
	errs := validateQuotaList(s.Hard, strategy.StatusPath.Child("hard"))
	return append(errs, validateQuotaList(s.Used, strategy.StatusPath.Child("used"))...)
}
