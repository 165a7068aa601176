package admissionregistration

import (
	admissionv1 "k8s.io/api/admissionregistration/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/printers"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

func validatingAdmissionPoliciesResource() *registry.Resource {
	type vap = admissionv1.ValidatingAdmissionPolicy
	return &registry.Resource{
		Group: Group, Version: "v1", Resource: "validatingadmissionpolicies",
		Kind: "ValidatingAdmissionPolicy", ListKind: "ValidatingAdmissionPolicyList",
		Singular: "validatingadmissionpolicy", Categories: []string{"api-extensions"},
		NoUnconditionalUpdate: true, // as kube-apiserver: a PUT must name a resourceVersion
		New:                   func() runtime.Object { return &vap{} },
		NewList:               func() runtime.Object { return &admissionv1.ValidatingAdmissionPolicyList{} },
		Strategy: strategy.Typed[*vap]{
			PrepareCreate: func(p *vap) { p.Status = admissionv1.ValidatingAdmissionPolicyStatus{} },
			PrepareUpdate: func(p, old *vap) { p.Status = old.Status },
			Defaults: func(p *vap) {
				if p.Spec.FailurePolicy == nil {
					p.Spec.FailurePolicy = new(admissionv1.Fail)
				}
				defaultMatchResources(p.Spec.MatchConstraints)
			},
			ValidateNew: func(p *vap) field.ErrorList {
				errs := strategy.ValidateGenericMeta(&p.ObjectMeta, false, apivalidation.NameIsDNSSubdomain)
				errs = append(errs, validateValidatingPolicySpec(p, policyOptions{})...)
				return append(errs, validateStaticSuffix(p.Name)...)
			},
			ValidateChange: func(p, old *vap) field.ErrorList {
				errs := strategy.ValidateGenericMetaUpdate(&p.ObjectMeta, &old.ObjectMeta)
				return append(errs, validateValidatingPolicySpec(p, validatingPolicyUpdateOptions(p, old))...)
			},
		},
		Status: strategy.TypedStatus[*vap]{
			PrepareUpdate: func(p, old *vap) {
				p.Spec = old.Spec
				strategy.ResetMetaForStatus(&p.ObjectMeta, &old.ObjectMeta)
			},
			ValidateChange: func(p, old *vap) field.ErrorList {
				errs := strategy.ValidateGenericMetaUpdate(&p.ObjectMeta, &old.ObjectMeta)
				return append(errs, validateValidatingPolicyStatus(&p.Status)...)
			},
		},
		Attrs:           strategy.Attrs(false, strategy.NamespaceField[*vap]),
		FieldLabelError: strategy.UnknownFieldLabel,
		Table:           printers.For(Group, "ValidatingAdmissionPolicy"),
	}
}

func validatingAdmissionPolicyBindingsResource() *registry.Resource {
	type binding = admissionv1.ValidatingAdmissionPolicyBinding
	validate := func(b *binding) field.ErrorList {
		p := strategy.SpecPath
		errs := validatePolicyName(p.Child("policyName"), b.Spec.PolicyName)
		errs = append(errs, validateParamRef(p.Child("paramRef"), b.Spec.ParamRef)...)
		errs = append(errs, validateMatchResources(p.Child("matchResources"), b.Spec.MatchResources)...)
		return append(errs, validateValidationActions(p.Child("validationActions"), b.Spec.ValidationActions)...)
	}
	return &registry.Resource{
		Group: Group, Version: "v1", Resource: "validatingadmissionpolicybindings",
		Kind: "ValidatingAdmissionPolicyBinding", ListKind: "ValidatingAdmissionPolicyBindingList",
		Singular: "validatingadmissionpolicybinding", Categories: []string{"api-extensions"},
		NoUnconditionalUpdate: true, // as kube-apiserver: a PUT must name a resourceVersion
		New:                   func() runtime.Object { return &binding{} },
		NewList:               func() runtime.Object { return &admissionv1.ValidatingAdmissionPolicyBindingList{} },
		Strategy: strategy.Typed[*binding]{
			Defaults: func(b *binding) { defaultMatchResources(b.Spec.MatchResources) },
			ValidateNew: func(b *binding) field.ErrorList {
				errs := strategy.ValidateGenericMeta(&b.ObjectMeta, false, apivalidation.NameIsDNSSubdomain)
				errs = append(errs, validate(b)...)
				return append(errs, validateStaticSuffix(b.Name)...)
			},
			ValidateChange: func(b, old *binding) field.ErrorList {
				return append(strategy.ValidateGenericMetaUpdate(&b.ObjectMeta, &old.ObjectMeta), validate(b)...)
			},
		},
		Attrs:           strategy.Attrs(false, strategy.NamespaceField[*binding]),
		FieldLabelError: strategy.UnknownFieldLabel,
		Table:           printers.For(Group, "ValidatingAdmissionPolicyBinding"),
	}
}

func mutatingAdmissionPoliciesResource() *registry.Resource {
	type mp = admissionv1.MutatingAdmissionPolicy
	return &registry.Resource{
		Group: Group, Version: "v1", Resource: "mutatingadmissionpolicies",
		Kind: "MutatingAdmissionPolicy", ListKind: "MutatingAdmissionPolicyList",
		Singular: "mutatingadmissionpolicy", Categories: []string{"api-extensions"},
		NoUnconditionalUpdate: true, // as kube-apiserver: a PUT must name a resourceVersion
		New:                   func() runtime.Object { return &mp{} },
		NewList:               func() runtime.Object { return &admissionv1.MutatingAdmissionPolicyList{} },
		Strategy: strategy.Typed[*mp]{
			Defaults: func(p *mp) {
				if p.Spec.FailurePolicy == nil {
					p.Spec.FailurePolicy = new(admissionv1.Fail)
				}
				defaultMatchResources(p.Spec.MatchConstraints)
			},
			ValidateNew: func(p *mp) field.ErrorList {
				errs := strategy.ValidateGenericMeta(&p.ObjectMeta, false, apivalidation.NameIsDNSSubdomain)
				errs = append(errs, validateMutatingPolicySpec(p, policyOptions{})...)
				return append(errs, validateStaticSuffix(p.Name)...)
			},
			ValidateChange: func(p, old *mp) field.ErrorList {
				errs := strategy.ValidateGenericMetaUpdate(&p.ObjectMeta, &old.ObjectMeta)
				return append(errs, validateMutatingPolicySpec(p, mutatingPolicyUpdateOptions(p, old))...)
			},
		},
		Attrs:           strategy.Attrs(false, strategy.NamespaceField[*mp]),
		FieldLabelError: strategy.UnknownFieldLabel,
		Table:           printers.For(Group, "MutatingAdmissionPolicy"),
	}
}

func mutatingAdmissionPolicyBindingsResource() *registry.Resource {
	type binding = admissionv1.MutatingAdmissionPolicyBinding
	validate := func(b *binding) field.ErrorList {
		p := strategy.SpecPath
		errs := validatePolicyName(p.Child("policyName"), b.Spec.PolicyName)
		errs = append(errs, validateParamRef(p.Child("paramRef"), b.Spec.ParamRef)...)
		errs = append(errs, validateMatchResources(p.Child("matchResources"), b.Spec.MatchResources)...)
		return append(errs, validateMutatingOperations(p.Child("matchResources"), b.Spec.MatchResources)...)
	}
	return &registry.Resource{
		Group: Group, Version: "v1", Resource: "mutatingadmissionpolicybindings",
		Kind: "MutatingAdmissionPolicyBinding", ListKind: "MutatingAdmissionPolicyBindingList",
		Singular: "mutatingadmissionpolicybinding", Categories: []string{"api-extensions"},
		NoUnconditionalUpdate: true, // as kube-apiserver: a PUT must name a resourceVersion
		New:                   func() runtime.Object { return &binding{} },
		NewList:               func() runtime.Object { return &admissionv1.MutatingAdmissionPolicyBindingList{} },
		Strategy: strategy.Typed[*binding]{
			Defaults: func(b *binding) { defaultMatchResources(b.Spec.MatchResources) },
			ValidateNew: func(b *binding) field.ErrorList {
				errs := strategy.ValidateGenericMeta(&b.ObjectMeta, false, apivalidation.NameIsDNSSubdomain)
				errs = append(errs, validate(b)...)
				return append(errs, validateStaticSuffix(b.Name)...)
			},
			ValidateChange: func(b, old *binding) field.ErrorList {
				return append(strategy.ValidateGenericMetaUpdate(&b.ObjectMeta, &old.ObjectMeta), validate(b)...)
			},
		},
		Attrs:           strategy.Attrs(false, strategy.NamespaceField[*binding]),
		FieldLabelError: strategy.UnknownFieldLabel,
		Table:           printers.For(Group, "MutatingAdmissionPolicyBinding"),
	}
}

// validateValidationActions: known, unique, not both Deny and Warn, one at
// least.
func validateValidationActions(p *field.Path, actions []admissionv1.ValidationAction) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[admissionv1.ValidationAction]()
	for i, a := range actions {
		errs = append(errs, notSupported(p.Index(i), a, validationActions)...)
		if seen.Has(a) {
			errs = append(errs, field.Duplicate(p.Index(i), a))
		}
		seen.Insert(a)
	}
	if seen.Has(admissionv1.Deny) && seen.Has(admissionv1.Warn) {
		errs = append(errs, field.Invalid(p, actions, "must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)"))
	}
	if len(seen) == 0 {
		// As kube-apiserver's declarative validation words it.
		errs = append(errs, field.Required(p, ""))
	}
	return errs
}

func validateValidatingPolicyStatus(s *admissionv1.ValidatingAdmissionPolicyStatus) field.ErrorList {
	p := strategy.StatusPath
	var errs field.ErrorList
	if tc := s.TypeChecking; tc != nil {
		for i, w := range tc.ExpressionWarnings {
			wp := p.Child("typeChecking", "expressionWarnings").Index(i)
			if w.Warning == "" {
				errs = append(errs, field.Required(wp.Child("warning"), ""))
			}
			if trimSpace(w.FieldRef) == "" {
				errs = append(errs, field.Required(wp.Child("fieldRef"), ""))
			}
		}
	}
	return append(errs, metav1validation.ValidateConditions(s.Conditions, p.Child("conditions"))...)
}
