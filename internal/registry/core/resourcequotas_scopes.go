package core

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

var (
	standardQuotaScopes = sets.New(
		corev1.ResourceQuotaScopeTerminating, corev1.ResourceQuotaScopeNotTerminating,
		corev1.ResourceQuotaScopeBestEffort, corev1.ResourceQuotaScopeNotBestEffort,
		corev1.ResourceQuotaScopePriorityClass, corev1.ResourceQuotaScopeVolumeAttributesClass,
		corev1.ResourceQuotaScopeCrossNamespacePodAffinity,
	)
	podComputeQuotaResources = sets.New(
		corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceLimitsCPU, corev1.ResourceLimitsMemory,
		corev1.ResourceRequestsCPU, corev1.ResourceRequestsMemory,
	)
	// conflictingScopes are pairs of scopes no quota may name together.
	conflictingScopes = [][2]corev1.ResourceQuotaScope{
		{corev1.ResourceQuotaScopeBestEffort, corev1.ResourceQuotaScopeNotBestEffort},
		{corev1.ResourceQuotaScopeTerminating, corev1.ResourceQuotaScopeNotTerminating},
	}
)

// scopeAppliesTo reports whether a quota scope can limit resource r.
func scopeAppliesTo(scope corev1.ResourceQuotaScope, r corev1.ResourceName) bool {
	switch scope {
	case corev1.ResourceQuotaScopeTerminating, corev1.ResourceQuotaScopeNotTerminating, corev1.ResourceQuotaScopeNotBestEffort,
		corev1.ResourceQuotaScopePriorityClass, corev1.ResourceQuotaScopeCrossNamespacePodAffinity:
		return r == corev1.ResourcePods || podComputeQuotaResources.Has(r)
	case corev1.ResourceQuotaScopeBestEffort:
		return r == corev1.ResourcePods
	case corev1.ResourceQuotaScopeVolumeAttributesClass:
		return r == corev1.ResourcePersistentVolumeClaims || r == corev1.ResourceRequestsStorage
	}
	return true
}

func conflicting(scopes sets.Set[corev1.ResourceQuotaScope]) int {
	n := 0
	for _, pair := range conflictingScopes {
		if scopes.HasAll(pair[0], pair[1]) {
			n++
		}
	}
	return n
}

// validateQuotaScopes checks spec.scopes: known scopes, each able to limit
// what spec.hard names, no conflicting pair.
func validateQuotaScopes(s *corev1.ResourceQuotaSpec) field.ErrorList {
	if len(s.Scopes) == 0 {
		return nil
	}
	var errs field.ErrorList
	p := strategy.SpecPath.Child("scopes")
	seen := sets.New[corev1.ResourceQuotaScope]()
	for _, scope := range s.Scopes {
		if !standardQuotaScopes.Has(scope) {
			errs = append(errs, field.Invalid(p, s.Scopes, "unsupported scope"))
		}
		for _, k := range strategy.SortedKeys(s.Hard) {
			if isStandardQuotaResource(k) && !scopeAppliesTo(scope, k) {
				errs = append(errs, field.Invalid(p, s.Scopes, "unsupported scope applied to resource"))
			}
		}
		seen.Insert(scope)
	}
	for range conflicting(seen) {
		errs = append(errs, field.Invalid(p, s.Scopes, "conflicting scopes"))
	}
	return errs
}

// validateScopeSelector checks spec.scopeSelector.matchExpressions (p).
func validateScopeSelector(s *corev1.ResourceQuotaSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[corev1.ResourceQuotaScope]()
	for _, req := range s.ScopeSelector.MatchExpressions {
		if !standardQuotaScopes.Has(req.ScopeName) {
			errs = append(errs, field.Invalid(p.Child("scopeName"), req.ScopeName, "unsupported scope"))
		}
		for _, k := range strategy.SortedKeys(s.Hard) {
			if isStandardQuotaResource(k) && !scopeAppliesTo(req.ScopeName, k) {
				errs = append(errs, field.Invalid(p, internalValue(s.ScopeSelector), "unsupported scope applied to resource"))
			}
		}
		errs = append(errs, validateScopeOperator(req, p)...)
		seen.Insert(req.ScopeName)
	}
	for range conflicting(seen) {
		errs = append(errs, field.Invalid(p, s.Scopes, "conflicting scopes"))
	}
	return errs
}

func validateScopeOperator(req corev1.ScopedResourceSelectorRequirement, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch req.ScopeName {
	case corev1.ResourceQuotaScopeBestEffort, corev1.ResourceQuotaScopeNotBestEffort, corev1.ResourceQuotaScopeTerminating,
		corev1.ResourceQuotaScopeNotTerminating, corev1.ResourceQuotaScopeCrossNamespacePodAffinity:
		if req.Operator != corev1.ScopeSelectorOpExists {
			errs = append(errs, field.Invalid(p.Child("operator"), req.Operator,
				"must be 'Exists' when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, "+
					"ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity"))
		}
	}
	switch req.Operator {
	case corev1.ScopeSelectorOpIn, corev1.ScopeSelectorOpNotIn:
		if len(req.Values) == 0 {
			errs = append(errs, field.Required(p.Child("values"), "must be at least one value when `operator` is 'In' or 'NotIn' for scope selector"))
		}
	case corev1.ScopeSelectorOpExists, corev1.ScopeSelectorOpDoesNotExist:
		if len(req.Values) != 0 {
			errs = append(errs, field.Invalid(p.Child("values"), req.Values, "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector"))
		}
	default:
		errs = append(errs, field.Invalid(p.Child("operator"), req.Operator, "not a valid selector operator"))
	}
	return errs
}
