package policy

import (
	policyv1 "k8s.io/api/policy/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/api/validation/path"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/printers"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

func podDisruptionBudgetsResource() *registry.Resource {
	return &registry.Resource{
		Group: "policy", Version: "v1", Resource: "poddisruptionbudgets", Kind: "PodDisruptionBudget",
		ListKind: "PodDisruptionBudgetList", Singular: "poddisruptionbudget", ShortNames: []string{"pdb"}, Namespaced: true,
		New:     func() runtime.Object { return &policyv1.PodDisruptionBudget{} },
		NewList: func() runtime.Object { return &policyv1.PodDisruptionBudgetList{} },
		Strategy: strategy.Typed[*policyv1.PodDisruptionBudget]{
			PrepareCreate: func(p *policyv1.PodDisruptionBudget) { p.Status = policyv1.PodDisruptionBudgetStatus{} },
			PrepareUpdate: func(p, old *policyv1.PodDisruptionBudget) { p.Status = old.Status },
			ValidateNew:   validatePDBCreate,
			ValidateChange: func(p, old *policyv1.PodDisruptionBudget) field.ErrorList {
				errs := strategy.ValidateGenericMetaUpdate(&p.ObjectMeta, &old.ObjectMeta)
				return append(errs, validatePDB(p, selectorHasInvalidValues(old))...)
			},
		},
		Status: strategy.TypedStatus[*policyv1.PodDisruptionBudget]{
			PrepareUpdate:  func(p, old *policyv1.PodDisruptionBudget) { p.Spec = old.Spec },
			ValidateChange: validatePDBStatusUpdate,
		},
		Attrs:                 strategy.Attrs[*policyv1.PodDisruptionBudget](true, nil),
		FieldLabelError:       strategy.UnknownFieldLabel,
		NoUnconditionalUpdate: true,
		Table:                 printers.For("policy", "PodDisruptionBudget"),
	}
}

// validatePDB checks the spec. kube-apiserver's budget validation names no
// metadata rule: names are checked only as path segments, by its generic
// checks.
func validatePDB(p *policyv1.PodDisruptionBudget, invalidSelectorValues bool) field.ErrorList {
	s, sp := &p.Spec, strategy.SpecPath
	var errs field.ErrorList
	if s.MinAvailable != nil && s.MaxUnavailable != nil {
		errs = append(errs, field.Invalid(sp, internalPDBSpec(s), "minAvailable and maxUnavailable cannot be both set"))
	}
	for _, c := range []struct {
		name string
		v    *intstr.IntOrString
	}{{"minAvailable", s.MinAvailable}, {"maxUnavailable", s.MaxUnavailable}} {
		if c.v == nil {
			continue
		}
		errs = append(errs, strategy.ValidateIntOrPercent(c.v, sp.Child(c.name))...)
		if c.v.Type == intstr.String && len(validation.IsValidPercent(c.v.StrVal)) == 0 && strategy.IntOrPercentValue(c.v) > 100 {
			errs = append(errs, field.Invalid(sp.Child(c.name), c.v, "must not be greater than 100%"))
		}
	}
	errs = append(errs, metav1validation.ValidateLabelSelector(s.Selector,
		metav1validation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: invalidSelectorValues}, sp.Child("selector"))...)
	if pol := s.UnhealthyPodEvictionPolicy; pol != nil && *pol != policyv1.IfHealthyBudget && *pol != policyv1.AlwaysAllow {
		errs = append(errs, field.NotSupported(sp.Child("unhealthyPodEvictionPolicy"), *pol,
			[]string{string(policyv1.AlwaysAllow), string(policyv1.IfHealthyBudget)}))
	}
	return errs
}

// validatePDBCreate checks a new budget: its spec, then, only when the
// spec is valid, its metadata, as kube-apiserver's generic checks run
// after the kind's.
func validatePDBCreate(p *policyv1.PodDisruptionBudget) field.ErrorList {
	if errs := validatePDB(p, false); len(errs) > 0 {
		return errs
	}
	return strategy.ValidateGenericMeta(&p.ObjectMeta, true, path.ValidatePathSegmentName)
}

func selectorHasInvalidValues(p *policyv1.PodDisruptionBudget) bool {
	return p.Spec.Selector != nil &&
		len(metav1validation.ValidateLabelSelector(p.Spec.Selector, metav1validation.LabelSelectorValidationOptions{}, nil)) > 0
}

func validatePDBStatusUpdate(p, old *policyv1.PodDisruptionBudget) field.ErrorList {
	s, sp := &p.Status, strategy.StatusPath
	errs := metav1validation.ValidateConditions(s.Conditions, sp.Child("conditions"))
	for _, c := range []struct {
		name string
		v    int32
	}{{"disruptionsAllowed", s.DisruptionsAllowed}, {"currentHealthy", s.CurrentHealthy},
		{"desiredHealthy", s.DesiredHealthy}, {"expectedPods", s.ExpectedPods}} {
		errs = append(errs, apivalidation.ValidateNonnegativeField(int64(c.v), sp.Child(c.name))...)
	}
	return append(errs, strategy.ValidateGenericMetaUpdate(&p.ObjectMeta, &old.ObjectMeta)...)
}

// internalPDBSpec renders a budget's spec as kube-apiserver's internal
// type is rendered in messages (Go field names).
func internalPDBSpec(s *policyv1.PodDisruptionBudgetSpec) any {
	return struct {
		MinAvailable               *intstr.IntOrString
		Selector                   any
		MaxUnavailable             *intstr.IntOrString
		UnhealthyPodEvictionPolicy *policyv1.UnhealthyPodEvictionPolicyType
	}{s.MinAvailable, s.Selector, s.MaxUnavailable, s.UnhealthyPodEvictionPolicy}
}
