package discoveryv1

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"

	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

// Limits of one slice.
const (
	maxTopologyLabels = 16
	maxAddresses      = 100
	maxPorts          = 100
	maxEndpoints      = 1000
)

var (
	supportedAddressTypes = []discoveryv1.AddressType{discoveryv1.AddressTypeFQDN, discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6}
	supportedProtocols    = []string{string(corev1.ProtocolSCTP), string(corev1.ProtocolTCP), string(corev1.ProtocolUDP)}
)

func validateEndpointSlice(s *discoveryv1.EndpointSlice, types []discoveryv1.AddressType) field.ErrorList {
	errs := strategy.ValidateMeta(&s.ObjectMeta, true, apivalidation.NameIsDNSSubdomain)
	return append(errs, validateEndpointSliceBody(s, types)...)
}

// validateEndpointSliceBody checks all but metadata. kube-apiserver
// reports the ports first, then the addresses and hostnames, then (from
// its declarative rules) the address type and the address counts: the
// errors come in that order.
func validateEndpointSliceBody(s *discoveryv1.EndpointSlice, types []discoveryv1.AddressType) field.ErrorList {
	errs := validatePorts(s.Ports, field.NewPath("ports"))
	errs = append(errs, validateEndpoints(s.Endpoints, s.AddressType, field.NewPath("endpoints"))...)
	p := field.NewPath("addressType")
	switch {
	case s.AddressType == "":
		errs = append(errs, field.Required(p, ""))
	case !slices.Contains(types, s.AddressType):
		valid := make([]string, len(types))
		for i, t := range types {
			valid[i] = string(t)
		}
		slices.Sort(valid)
		errs = append(errs, field.NotSupported(p, s.AddressType, valid))
	}
	return append(errs, validateEndpointCounts(s.Endpoints, field.NewPath("endpoints"))...)
}

func validatePorts(ports []discoveryv1.EndpointPort, p *field.Path) field.ErrorList {
	if len(ports) > maxPorts {
		return field.ErrorList{field.TooMany(p, len(ports), maxPorts)}
	}
	var errs field.ErrorList
	names := sets.New[string]()
	for i, port := range ports {
		idx := p.Index(i)
		name := ""
		if port.Name != nil {
			name = *port.Name
		}
		if name != "" {
			errs = append(errs, strategy.Check(idx.Child("name"), name, validation.IsDNS1123Label)...)
		}
		if names.Has(name) {
			errs = append(errs, field.Duplicate(idx.Child("name"), name))
		}
		names.Insert(name)
		switch {
		case port.Protocol == nil:
			errs = append(errs, field.Required(idx.Child("protocol"), ""))
		case !slices.Contains(supportedProtocols, string(*port.Protocol)):
			errs = append(errs, field.NotSupported(idx.Child("protocol"), *port.Protocol, supportedProtocols))
		}
		if port.AppProtocol != nil {
			errs = append(errs, strategy.ValidateName(idx.Child("appProtocol"), *port.AppProtocol, validation.IsQualifiedName)...)
		}
	}
	return errs
}

func validateEndpoints(endpoints []discoveryv1.Endpoint, addrType discoveryv1.AddressType, p *field.Path) field.ErrorList {
	if len(endpoints) > maxEndpoints {
		return nil // reported by validateEndpointCounts
	}
	var errs field.ErrorList
	for i, ep := range endpoints {
		idx := p.Index(i)
		addrs := idx.Child("addresses")
		for j, a := range ep.Addresses {
			errs = append(errs, validateAddress(addrs, addrs.Index(j), a, addrType)...)
		}
		topo := idx.Child("deprecatedTopology")
		if len(ep.DeprecatedTopology) > maxTopologyLabels {
			errs = append(errs, field.TooMany(topo, len(ep.DeprecatedTopology), maxTopologyLabels))
		}
		errs = append(errs, metav1validation.ValidateLabels(ep.DeprecatedTopology, topo)...)
		if ep.Hostname != nil {
			errs = append(errs, strategy.Check(idx.Child("hostname"), *ep.Hostname, validation.IsDNS1123Label)...)
		}
	}
	return errs
}

// validateAddress checks one address against the slice's address type
// (other types are not checked). A wrong IP family is reported on the
// addresses list itself, as kube-apiserver does.
func validateAddress(list, p *field.Path, addr string, t discoveryv1.AddressType) field.ErrorList {
	switch t {
	case discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6:
		errs := validation.IsValidIP(p, addr)
		if len(errs) > 0 {
			return errs
		}
		if v4 := netutils.IsIPv4String(addr); v4 != (t == discoveryv1.AddressTypeIPv4) {
			errs = append(errs, field.Invalid(list, addr, fmt.Sprintf("must be an %s address", t)))
		}
		return append(errs, validateNonSpecialIP(p, addr)...)
	case discoveryv1.AddressTypeFQDN:
		return validation.IsFullyQualifiedDomainName(p, addr)
	}
	return nil
}

// validateNonSpecialIP refuses addresses no endpoint can have: unspecified,
// loopback, link-local.
func validateNonSpecialIP(p *field.Path, addr string) field.ErrorList {
	ip := netutils.ParseIPSloppy(addr)
	var errs field.ErrorList
	if ip.IsUnspecified() {
		errs = append(errs, field.Invalid(p, addr, fmt.Sprintf("may not be unspecified (%v)", addr)))
	}
	if ip.IsLoopback() {
		errs = append(errs, field.Invalid(p, addr, "may not be in the loopback range (127.0.0.0/8, ::1/128)"))
	}
	if ip.IsLinkLocalUnicast() {
		errs = append(errs, field.Invalid(p, addr, "may not be in the link-local range (169.254.0.0/16, fe80::/10)"))
	}
	if ip.IsLinkLocalMulticast() {
		errs = append(errs, field.Invalid(p, addr, "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)"))
	}
	return errs
}

func validateEndpointCounts(endpoints []discoveryv1.Endpoint, p *field.Path) field.ErrorList {
	if len(endpoints) > maxEndpoints {
		return field.ErrorList{field.TooMany(p, len(endpoints), maxEndpoints)}
	}
	var errs field.ErrorList
	for i, ep := range endpoints {
		addrs := p.Index(i).Child("addresses")
		switch n := len(ep.Addresses); {
		case n == 0:
			errs = append(errs, field.Required(addrs, ""))
		case n > maxAddresses:
			errs = append(errs, field.TooMany(addrs, n, maxAddresses))
		}
	}
	return errs
}
