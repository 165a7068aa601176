package discoveryv1

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/printers"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

func endpointSlicesResource() *registry.Resource {
	return &registry.Resource{
		Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices", Kind: "EndpointSlice",
		ListKind: "EndpointSliceList", Singular: "endpointslice", Namespaced: true,
		LabelsInGeneration: true, // as kube-apiserver: a label change moves the generation
		New:                func() runtime.Object { return &discoveryv1.EndpointSlice{} },
		NewList:            func() runtime.Object { return &discoveryv1.EndpointSliceList{} },
		Strategy: strategy.Typed[*discoveryv1.EndpointSlice]{
			Defaults: defaultEndpointSlice,
			ValidateNew: func(s *discoveryv1.EndpointSlice) field.ErrorList {
				return validateEndpointSlice(s, supportedAddressTypes)
			},
			ValidateChange: func(s, old *discoveryv1.EndpointSlice) field.ErrorList {
				errs := strategy.ValidateMetaUpdate(&s.ObjectMeta, &old.ObjectMeta)
				// A changed address type is the only error kube-apiserver
				// reports of the body.
				if imm := strategy.Immutable(field.NewPath("addressType"), s.AddressType, old.AddressType); len(imm) > 0 {
					return append(errs, imm...)
				}
				return append(errs, validateEndpointSliceBody(s, append(supportedAddressTypes, discoveryv1.AddressType("IP")))...)
			},
			Warn: endpointSliceWarnings,
		},
		Attrs:      strategy.Attrs[*discoveryv1.EndpointSlice](true, nil),
		Table:      printers.For("discovery.k8s.io", "EndpointSlice"),
		Advertised: advertisedSlice,
	}
}

// endpointSliceWarnings are kube-apiserver's: FQDN slices are deprecated
// (on create), and addresses in a form that parses only leniently are
// warned about (on create and update), except in the slices the endpoint
// controllers write.
func endpointSliceWarnings(s, old *discoveryv1.EndpointSlice) []string {
	var out []string
	if old == nil && s.AddressType == discoveryv1.AddressTypeFQDN {
		out = append(out, fmt.Sprintf("%s: FQDN endpoints are deprecated", field.NewPath("spec", "addressType")))
	}
	switch s.Labels[discoveryv1.LabelManagedBy] {
	case "endpointslice-controller.k8s.io", "endpointslicemirroring-controller.k8s.io":
		return out
	}
	for i, ep := range s.Endpoints {
		for j, addr := range ep.Addresses {
			out = append(out, validation.GetWarningsForIP(field.NewPath("endpoints").Index(i).Child("addresses").Index(j), addr)...)
		}
	}
	return out
}

// defaultEndpointSlice gives every port a name ("") and a protocol (TCP),
// as discovery.k8s.io/v1's defaulting does.
func defaultEndpointSlice(s *discoveryv1.EndpointSlice) {
	for i := range s.Ports {
		p := &s.Ports[i]
		if p.Name == nil {
			p.Name = new("")
		}
		if p.Protocol == nil {
			p.Protocol = new(corev1.ProtocolTCP)
		}
	}
}
