package networking

import (
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/validate/content"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/printers"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

func ipAddressesResource() *registry.Resource {
	return &registry.Resource{
		Group: "networking.k8s.io", Version: "v1", Resource: "ipaddresses", Kind: "IPAddress",
		ListKind: "IPAddressList", Singular: "ipaddress", ShortNames: []string{"ip"},
		NoGeneration: true, // as kube-apiserver: no metadata.generation
		New:          func() runtime.Object { return &networkingv1.IPAddress{} },
		NewList:      func() runtime.Object { return &networkingv1.IPAddressList{} },
		Strategy: strategy.Typed[*networkingv1.IPAddress]{
			ValidateNew: validateIPAddress,
			ValidateChange: func(ip, old *networkingv1.IPAddress) field.ErrorList {
				errs := strategy.ValidateMetaUpdate(&ip.ObjectMeta, &old.ObjectMeta)
				return append(errs, strategy.Immutable(strategy.SpecPath.Child("parentRef"), ip.Spec.ParentRef, old.Spec.ParentRef)...)
			},
		},
		Attrs: strategy.Attrs[*networkingv1.IPAddress](true, nil),
		Table: printers.For("networking.k8s.io", "IPAddress"),
	}
}

// ipAddressName requires the name to be an IP address in canonical form.
func ipAddressName(name string, _ bool) []string {
	var msgs []string
	for _, e := range validation.IsValidIP(&field.Path{}, name) {
		msgs = append(msgs, e.Detail)
	}
	return msgs
}

// validateIPAddress checks an address; what kube-apiserver v1.37 checks
// with its declarative rules (a parent, its resource and name) is reported
// last.
func validateIPAddress(ip *networkingv1.IPAddress) field.ErrorList {
	errs := strategy.ValidateMeta(&ip.ObjectMeta, false, ipAddressName)
	ref := ip.Spec.ParentRef
	p := strategy.SpecPath.Child("parentRef")
	if ref == nil {
		return append(errs, field.Required(p, ""))
	}
	var late field.ErrorList
	if ref.Group != "" {
		errs = append(errs, strategy.ValidateName(p.Child("group"), ref.Group, validation.IsDNS1123Subdomain)...)
	}
	errs = append(errs, validatePathSegmentLate(p.Child("resource"), ref.Resource, &late)...)
	errs = append(errs, validatePathSegmentLate(p.Child("name"), ref.Name, &late)...)
	if ref.Namespace != "" {
		errs = append(errs, strategy.ValidateName(p.Child("namespace"), ref.Namespace, func(s string) []string { return content.IsPathSegmentName(s) })...)
	}
	return append(errs, late...)
}
