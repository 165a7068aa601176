package networking

import (
	networkingv1 "k8s.io/api/networking/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/printers"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

// maxControllerLen is the longest spec.controller.
const maxControllerLen = 250

func ingressClassesResource() *registry.Resource {
	return &registry.Resource{
		Group: "networking.k8s.io", Version: "v1", Resource: "ingressclasses", Kind: "IngressClass",
		ListKind: "IngressClassList", Singular: "ingressclass",
		New:     func() runtime.Object { return &networkingv1.IngressClass{} },
		NewList: func() runtime.Object { return &networkingv1.IngressClassList{} },
		Strategy: strategy.Typed[*networkingv1.IngressClass]{
			Defaults:    defaultIngressClass,
			ValidateNew: validateIngressClass,
			ValidateChange: func(c, old *networkingv1.IngressClass) field.ErrorList {
				errs := strategy.ValidateMetaUpdate(&c.ObjectMeta, &old.ObjectMeta)
				errs = append(errs, apivalidation.ValidateImmutableField(c.Spec.Controller, old.Spec.Controller,
					strategy.SpecPath.Child("controller"))...)
				return append(errs, validateIngressClass(c)...)
			},
		},
		Attrs: strategy.Attrs[*networkingv1.IngressClass](true, nil),
		Table: printers.For("networking.k8s.io", "IngressClass"),
	}
}

// defaultIngressClass gives parameters without a scope the Cluster scope.
func defaultIngressClass(c *networkingv1.IngressClass) {
	if p := c.Spec.Parameters; p != nil && p.Scope == nil {
		p.Scope = new(networkingv1.IngressClassParametersReferenceScopeCluster)
	}
}

// validateIngressClass checks a class. The errors kube-apiserver v1.37
// reports from its declarative rules (required controller, parameter
// kind, name and scope; a namespace with Cluster scope) come after the
// others.
func validateIngressClass(c *networkingv1.IngressClass) field.ErrorList {
	errs := strategy.ValidateMeta(&c.ObjectMeta, false, apivalidation.NameIsDNSSubdomain)
	var late field.ErrorList
	cp := strategy.SpecPath.Child("controller")
	switch {
	case c.Spec.Controller == "":
		late = append(late, field.Required(cp, ""))
	default:
		if len(c.Spec.Controller) > maxControllerLen {
			errs = append(errs, field.TooLong(cp, "", maxControllerLen))
		}
		errs = append(errs, validation.IsDomainPrefixedPath(cp, c.Spec.Controller)...)
	}
	errs = append(errs, validateParameters(c.Spec.Parameters, strategy.SpecPath.Child("parameters"), &late)...)
	return append(errs, late...)
}

func validateParameters(params *networkingv1.IngressClassParametersReference, p *field.Path, late *field.ErrorList) field.ErrorList {
	if params == nil {
		return nil
	}
	var errs field.ErrorList
	if params.APIGroup != nil {
		errs = append(errs, strategy.ValidateName(p.Child("apiGroup"), *params.APIGroup, validation.IsDNS1123Subdomain)...)
	}
	errs = append(errs, validatePathSegmentLate(p.Child("kind"), params.Kind, late)...)
	errs = append(errs, validatePathSegmentLate(p.Child("name"), params.Name, late)...)
	if params.Scope == nil {
		*late = append(*late, field.Required(p.Child("scope"), ""))
		return errs
	}
	switch *params.Scope {
	case networkingv1.IngressClassParametersReferenceScopeNamespace:
		if params.Namespace == nil {
			errs = append(errs, field.Required(p.Child("namespace"), "`parameters.scope` is set to 'Namespace'"))
		} else {
			for _, msg := range apivalidation.ValidateNamespaceName(*params.Namespace, false) {
				errs = append(errs, field.Invalid(p.Child("namespace"), *params.Namespace, msg))
			}
		}
	case networkingv1.IngressClassParametersReferenceScopeCluster:
		if params.Namespace != nil {
			*late = append(*late, field.Forbidden(p.Child("namespace"), "`parameters.scope` is set to 'Cluster'"))
		}
	default:
		errs = append(errs, field.NotSupported(p.Child("scope"), *params.Scope, []string{
			networkingv1.IngressClassParametersReferenceScopeCluster, networkingv1.IngressClassParametersReferenceScopeNamespace}))
	}
	return errs
}

// validatePathSegmentLate is validatePathSegment with a missing value
// reported among the late (declarative) errors.
func validatePathSegmentLate(p *field.Path, v string, late *field.ErrorList) field.ErrorList {
	if v == "" {
		*late = append(*late, field.Required(p, ""))
		return nil
	}
	return validatePathSegment(p, v)
}
