package core

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"

	"github.com/setpoint-dev/setpoint/internal/printers"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/podspec"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

// endpointsDeprecation is the warning kube-apiserver v1.37 sends with every
// answer about v1 Endpoints.
const endpointsDeprecation = "v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"

func endpointsResource() *registry.Resource {
	return &registry.Resource{
		Version: "v1", Resource: "endpoints", Kind: "Endpoints", ListKind: "EndpointsList", Singular: "endpoints",
		ShortNames: []string{"ep"}, Namespaced: true,
		NoGeneration: true, // as kube-apiserver: no metadata.generation
		Deprecation:  endpointsDeprecation,
		New:          func() runtime.Object { return &corev1.Endpoints{} },
		NewList:      func() runtime.Object { return &corev1.EndpointsList{} },
		Strategy: strategy.CreateOnUpdate[*corev1.Endpoints]{Typed: strategy.Typed[*corev1.Endpoints]{
			Defaults: defaultEndpoints,
			ValidateNew: func(e *corev1.Endpoints) field.ErrorList {
				return validateEndpoints(e, nil)
			},
			ValidateChange: func(e, old *corev1.Endpoints) field.ErrorList {
				errs := strategy.ValidateMetaUpdate(&e.ObjectMeta, &old.ObjectMeta)
				return append(errs, validateEndpoints(e, old)...)
			},
		}},
		Attrs:      strategy.Attrs[*corev1.Endpoints](true, nil),
		Table:      printers.For("", "Endpoints"),
		Advertised: advertisedEndpoints,
	}
}

// defaultEndpoints gives ports without a protocol TCP.
func defaultEndpoints(e *corev1.Endpoints) {
	for i := range e.Subsets {
		for j := range e.Subsets[i].Ports {
			if p := &e.Subsets[i].Ports[j]; p.Protocol == "" {
				p.Protocol = corev1.ProtocolTCP
			}
		}
	}
}

// validateEndpoints checks the name and the subsets. On update (old set),
// subsets that did not change are accepted whatever they hold, as
// Kubernetes does for data older servers let in.
func validateEndpoints(e, old *corev1.Endpoints) field.ErrorList {
	errs := strategy.ValidateMeta(&e.ObjectMeta, true, apivalidation.NameIsDNSSubdomain)
	subsetErrs := validateEndpointSubsets(e.Subsets, field.NewPath("subsets"))
	if len(subsetErrs) > 0 && old != nil && apiequality.Semantic.DeepEqual(old.Subsets, e.Subsets) {
		subsetErrs = nil
	}
	return append(errs, subsetErrs...)
}

func validateEndpointSubsets(subsets []corev1.EndpointSubset, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i := range subsets {
		ss, idx := &subsets[i], p.Index(i)
		if len(ss.Addresses) == 0 && len(ss.NotReadyAddresses) == 0 {
			errs = append(errs, field.Required(idx, "must specify `addresses` or `notReadyAddresses`"))
		}
		for j := range ss.Addresses {
			errs = append(errs, validateEndpointAddress(&ss.Addresses[j], idx.Child("addresses").Index(j))...)
		}
		for j := range ss.NotReadyAddresses {
			errs = append(errs, validateEndpointAddress(&ss.NotReadyAddresses[j], idx.Child("notReadyAddresses").Index(j))...)
		}
		for j := range ss.Ports {
			errs = append(errs, validateEndpointPort(&ss.Ports[j], len(ss.Ports) > 1, idx.Child("ports").Index(j))...)
		}
	}
	return errs
}

func validateEndpointAddress(a *corev1.EndpointAddress, p *field.Path) field.ErrorList {
	errs := validation.IsValidIPForLegacyField(p.Child("ip"), a.IP, true, nil)
	errs = append(errs, strategy.ValidateName(p.Child("hostname"), a.Hostname, validation.IsDNS1123Label)...)
	if a.NodeName != nil {
		for _, msg := range apivalidation.NameIsDNSSubdomain(*a.NodeName, false) {
			errs = append(errs, field.Invalid(p.Child("nodeName"), *a.NodeName, msg))
		}
	}
	return append(errs, validateEndpointIP(a.IP, p.Child("ip"))...)
}

// validateEndpointIP refuses the addresses an endpoint cannot have:
// unparsable, unspecified, loopback and link-local ones, with
// kube-apiserver's messages (endpoints, endpoint slices and service
// external IPs share the rule).
func validateEndpointIP(ip string, p *field.Path) field.ErrorList {
	parsed := netutils.ParseIPSloppy(ip)
	if parsed == nil {
		return field.ErrorList{field.Invalid(p, ip, "must be a valid IP address")}
	}
	var errs field.ErrorList
	if parsed.IsUnspecified() {
		errs = append(errs, field.Invalid(p, ip, fmt.Sprintf("may not be unspecified (%v)", ip)))
	}
	if parsed.IsLoopback() {
		errs = append(errs, field.Invalid(p, ip, "may not be in the loopback range (127.0.0.0/8, ::1/128)"))
	}
	if parsed.IsLinkLocalUnicast() {
		errs = append(errs, field.Invalid(p, ip, "may not be in the link-local range (169.254.0.0/16, fe80::/10)"))
	}
	if parsed.IsLinkLocalMulticast() {
		errs = append(errs, field.Invalid(p, ip, "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)"))
	}
	return errs
}

func validateEndpointPort(port *corev1.EndpointPort, requireName bool, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if requireName && port.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	} else {
		errs = append(errs, strategy.ValidateName(p.Child("name"), port.Name, validation.IsDNS1123Label)...)
	}
	for _, msg := range validation.IsValidPortNum(int(port.Port)) {
		errs = append(errs, field.Invalid(p.Child("port"), port.Port, msg))
	}
	errs = append(errs, strategy.ValidateEnum(p.Child("protocol"), port.Protocol, podspec.Protocols...)...)
	if port.AppProtocol != nil {
		for _, msg := range validation.IsQualifiedName(*port.AppProtocol) {
			errs = append(errs, field.Invalid(p.Child("appProtocol"), *port.AppProtocol, msg))
		}
	}
	return errs
}
