package networking

import (
	networkingv1 "k8s.io/api/networking/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"

	"github.com/setpoint-dev/setpoint/internal/printers"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/core"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

// DefaultServiceCIDRName is the ServiceCIDR of the server's service range.
const DefaultServiceCIDRName = "kubernetes"

func serviceCIDRsResource() *registry.Resource {
	return &registry.Resource{
		Group: "networking.k8s.io", Version: "v1", Resource: "servicecidrs", Kind: "ServiceCIDR",
		ListKind: "ServiceCIDRList", Singular: "servicecidr",
		NoGeneration: true, // as kube-apiserver: no metadata.generation
		New:          func() runtime.Object { return &networkingv1.ServiceCIDR{} },
		NewList:      func() runtime.Object { return &networkingv1.ServiceCIDRList{} },
		Strategy: strategy.Typed[*networkingv1.ServiceCIDR]{
			PrepareCreate:  func(c *networkingv1.ServiceCIDR) { c.Status = networkingv1.ServiceCIDRStatus{} },
			PrepareUpdate:  func(c, old *networkingv1.ServiceCIDR) { c.Status = old.Status },
			ValidateNew:    validateServiceCIDR,
			ValidateChange: validateServiceCIDRUpdate,
		},
		Status: strategy.TypedStatus[*networkingv1.ServiceCIDR]{
			PrepareUpdate: func(c, old *networkingv1.ServiceCIDR) {
				c.Spec = old.Spec
				strategy.ResetMetaForStatus(&c.ObjectMeta, &old.ObjectMeta)
			},
			ValidateChange: func(c, old *networkingv1.ServiceCIDR) field.ErrorList {
				return strategy.ValidateMetaUpdate(&c.ObjectMeta, &old.ObjectMeta)
			},
		},
		Bootstrap: bootstrapServiceCIDRs,
		Attrs:     strategy.Attrs[*networkingv1.ServiceCIDR](true, nil),
		Table:     printers.For("networking.k8s.io", "ServiceCIDR"),
	}
}

// bootstrapServiceCIDRs is the ServiceCIDR of the service range, Ready, as
// kube-apiserver's default ServiceCIDR controller keeps it.
func bootstrapServiceCIDRs() []runtime.Object {
	return []runtime.Object{&networkingv1.ServiceCIDR{
		ObjectMeta: metav1.ObjectMeta{Name: DefaultServiceCIDRName},
		Spec:       networkingv1.ServiceCIDRSpec{CIDRs: []string{core.ServiceCIDR}},
		Status: networkingv1.ServiceCIDRStatus{Conditions: []metav1.Condition{{
			Type: networkingv1.ServiceCIDRConditionReady, Status: metav1.ConditionTrue,
			LastTransitionTime: metav1.Now(), Message: "Kubernetes Service CIDR is ready",
		}}},
	}}
}

func validateServiceCIDR(c *networkingv1.ServiceCIDR) field.ErrorList {
	errs := strategy.ValidateMeta(&c.ObjectMeta, false, apivalidation.NameIsDNSSubdomain)
	return append(errs, validateCIDRs(c.Spec.CIDRs, strategy.SpecPath.Child("cidrs"))...)
}

func validateCIDRs(cidrs []string, p *field.Path) field.ErrorList {
	switch {
	case len(cidrs) == 0:
		return field.ErrorList{field.Required(p, "at least one CIDR required")}
	case len(cidrs) > 2:
		return field.ErrorList{field.Invalid(p, strategy.GoNamed{V: networkingv1.ServiceCIDRSpec{CIDRs: cidrs}}, "may only hold up to 2 values")}
	}
	var errs field.ErrorList
	for i, c := range cidrs {
		errs = append(errs, validation.IsValidCIDR(p.Index(i), c)...)
	}
	if len(cidrs) == 2 {
		f0, f1 := netutils.IPFamilyOfCIDRString(cidrs[0]), netutils.IPFamilyOfCIDRString(cidrs[1])
		if f0 == f1 && f0 != netutils.IPFamilyUnknown {
			errs = append(errs, field.Invalid(p, cidrs, "may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64"))
		}
	}
	return errs
}

// validateServiceCIDRUpdate: the CIDRs are immutable, but a single-stack
// ServiceCIDR may gain a CIDR of the other family.
func validateServiceCIDRUpdate(c, old *networkingv1.ServiceCIDR) field.ErrorList {
	errs := strategy.ValidateMetaUpdate(&c.ObjectMeta, &old.ObjectMeta)
	p := strategy.SpecPath.Child("cidrs")
	switch {
	case len(old.Spec.CIDRs) == len(c.Spec.CIDRs):
		for i, cidr := range old.Spec.CIDRs {
			if cidr != c.Spec.CIDRs[i] {
				errs = append(errs, field.Invalid(p.Index(i), c.Spec.CIDRs[i], apivalidation.FieldImmutableErrorMsg))
			}
		}
	case len(old.Spec.CIDRs) == 1 && len(c.Spec.CIDRs) == 2:
		if c.Spec.CIDRs[0] != old.Spec.CIDRs[0] {
			errs = append(errs, field.Invalid(p.Index(0), c.Spec.CIDRs[0], apivalidation.FieldImmutableErrorMsg))
		}
		errs = append(errs, validateCIDRs(c.Spec.CIDRs, p)...)
	default:
		errs = append(errs, field.Invalid(p, c.Spec.CIDRs, apivalidation.FieldImmutableErrorMsg))
	}
	return errs
}
