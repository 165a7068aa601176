package core

import (
	"fmt"
	"net"
	"strings"

	"github.com/setpoint-dev/setpoint/internal/registry/podspec"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
	corev1 "k8s.io/api/core/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// serviceTypes in the order kube-apiserver lists them (sorted).
var serviceTypes = []corev1.ServiceType{
	corev1.ServiceTypeClusterIP, corev1.ServiceTypeExternalName, corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeNodePort,
}

func isHeadless(s *corev1.Service) bool {
	return s.Spec.ClusterIP == corev1.ClusterIPNone || (len(s.Spec.ClusterIPs) > 0 && s.Spec.ClusterIPs[0] == corev1.ClusterIPNone)
}

// validateServiceSpec checks a (defaulted) service spec.
func validateServiceSpec(s *corev1.Service) field.ErrorList {
	sp := &s.Spec
	errs := strategy.ValidateEnum(strategy.SpecPath.Child("type"), sp.Type, serviceTypes...)
	if len(sp.Ports) == 0 && !isHeadless(s) && sp.Type != corev1.ServiceTypeExternalName {
		errs = append(errs, field.Required(strategy.SpecPath.Child("ports"), ""))
	}
	errs = append(errs, validateServicePorts(sp, strategy.SpecPath.Child("ports"))...)
	errs = append(errs, metav1validation.ValidateLabels(sp.Selector, strategy.SpecPath.Child("selector"))...)
	errs = append(errs, strategy.ValidateEnum(strategy.SpecPath.Child("sessionAffinity"), sp.SessionAffinity,
		corev1.ServiceAffinityClientIP, corev1.ServiceAffinityNone)...)
	if c := sp.SessionAffinityConfig; c != nil && c.ClientIP != nil && c.ClientIP.TimeoutSeconds != nil {
		if t := *c.ClientIP.TimeoutSeconds; t < 1 || t > 86400 {
			errs = append(errs, field.Invalid(strategy.SpecPath.Child("sessionAffinityConfig", "clientIP", "timeoutSeconds"), t,
				validation.InclusiveRangeError(1, 86400)))
		}
	}
	errs = append(errs, validateClusterIPs(s)...)
	for i, ip := range sp.ExternalIPs {
		errs = append(errs, strategy.ValidateIP(strategy.SpecPath.Child("externalIPs").Index(i), ip)...)
	}
	for i, r := range sp.LoadBalancerSourceRanges {
		if _, _, err := net.ParseCIDR(strings.TrimSpace(r)); err != nil {
			errs = append(errs, field.Invalid(strategy.SpecPath.Child("loadBalancerSourceRanges").Index(i), r, "must be a valid CIDR"))
		}
	}
	if sp.ExternalTrafficPolicy != "" {
		errs = append(errs, strategy.ValidateEnum(strategy.SpecPath.Child("externalTrafficPolicy"), sp.ExternalTrafficPolicy,
			corev1.ServiceExternalTrafficPolicyCluster, corev1.ServiceExternalTrafficPolicyLocal)...)
		if !needsNodePorts(sp.Type) && len(sp.ExternalIPs) == 0 {
			errs = append(errs, field.Invalid(strategy.SpecPath.Child("externalTrafficPolicy"), sp.ExternalTrafficPolicy,
				"may only be set for externally-accessible services"))
		}
	}
	if p := sp.InternalTrafficPolicy; p != nil {
		errs = append(errs, strategy.ValidateEnum(strategy.SpecPath.Child("internalTrafficPolicy"), *p,
			corev1.ServiceInternalTrafficPolicyCluster, corev1.ServiceInternalTrafficPolicyLocal)...)
	}
	return append(errs, validateIPFamilies(sp)...)
}

func validateServicePorts(sp *corev1.ServiceSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	names, ports, nodePorts := sets.New[string](), sets.New[string](), sets.New[string]()
	for i, port := range sp.Ports {
		idx := p.Index(i)
		switch {
		case port.Name == "" && len(sp.Ports) > 1:
			errs = append(errs, field.Required(idx.Child("name"), ""))
		case port.Name != "" && names.Has(port.Name):
			errs = append(errs, field.Duplicate(idx.Child("name"), port.Name))
		default:
			errs = append(errs, strategy.ValidateName(idx.Child("name"), port.Name, validation.IsDNS1123Label)...)
		}
		names.Insert(port.Name)
		for _, msg := range validation.IsValidPortNum(int(port.Port)) {
			errs = append(errs, field.Invalid(idx.Child("port"), port.Port, msg))
		}
		errs = append(errs, strategy.ValidateEnum(idx.Child("protocol"), port.Protocol, podspec.Protocols...)...)
		if port.TargetPort.Type == intstr.String {
			errs = append(errs, strategy.ValidateName(idx.Child("targetPort"), port.TargetPort.StrVal, validation.IsValidPortName)...)
		} else {
			errs = append(errs, podspec.ValidatePortOrName(idx.Child("targetPort"), port.TargetPort.IntVal, "")...)
		}
		key := fmt.Sprintf("%d/%s", port.Port, port.Protocol)
		if ports.Has(key) {
			errs = append(errs, field.Duplicate(idx, key))
		}
		ports.Insert(key)
		if port.NodePort == 0 {
			continue
		}
		if !needsNodePorts(sp.Type) {
			errs = append(errs, field.Forbidden(idx.Child("nodePort"), fmt.Sprintf("may not be used when `type` is '%s'", sp.Type)))
		}
		errs = append(errs, podspec.ValidatePortNum(idx.Child("nodePort"), port.NodePort)...)
		nkey := fmt.Sprintf("%d/%s", port.NodePort, port.Protocol)
		if nodePorts.Has(nkey) {
			errs = append(errs, field.Duplicate(idx.Child("nodePort"), port.NodePort))
		}
		nodePorts.Insert(nkey)
	}
	return errs
}

// validateClusterIPs checks the cluster IPs are IPs ("None" first for
// headless services), agree with spec.clusterIP, and are absent from
// ExternalName services, which need an external name instead.
func validateClusterIPs(s *corev1.Service) field.ErrorList {
	sp := &s.Spec
	var errs field.ErrorList
	if sp.Type == corev1.ServiceTypeExternalName {
		if len(sp.ClusterIPs) > 0 || sp.ClusterIP != "" {
			errs = append(errs, field.Forbidden(strategy.SpecPath.Child("clusterIPs"), "may not be set for ExternalName services"))
		}
		name := strings.TrimSuffix(sp.ExternalName, ".")
		if name == "" {
			return append(errs, field.Required(strategy.SpecPath.Child("externalName"), ""))
		}
		return append(errs, validation.IsFullyQualifiedDomainName(strategy.SpecPath.Child("externalName"), name)...)
	}
	p := strategy.SpecPath.Child("clusterIPs")
	if len(sp.ClusterIPs) > 0 && sp.ClusterIP != sp.ClusterIPs[0] {
		errs = append(errs, field.Invalid(p, sp.ClusterIPs, "first value must match `clusterIP`"))
	}
	if isHeadless(s) {
		if needsNodePorts(sp.Type) {
			errs = append(errs, field.Invalid(p.Index(0), corev1.ClusterIPNone, fmt.Sprintf("may not be set to 'None' for %s services", sp.Type)))
		}
		if len(sp.ClusterIPs) > 1 {
			errs = append(errs, field.Invalid(p, sp.ClusterIPs, "must have at most one value when the first is 'None'"))
		}
		return errs
	}
	errs = append(errs, strategy.ValidateIPList(p, sp.ClusterIPs, "")...)
	if len(sp.ClusterIPs) > 2 {
		errs = append(errs, field.Invalid(p, sp.ClusterIPs, "may specify no more than one IP for each IP family"))
	}
	return errs
}

func validateIPFamilies(sp *corev1.ServiceSpec) field.ErrorList {
	var errs field.ErrorList
	fp := strategy.SpecPath.Child("ipFamilies")
	if sp.Type == corev1.ServiceTypeExternalName {
		if len(sp.IPFamilies) > 0 {
			errs = append(errs, field.Forbidden(fp, "may not be set for ExternalName services"))
		}
		return errs
	}
	if sp.IPFamilyPolicy != nil {
		errs = append(errs, strategy.ValidateEnum(strategy.SpecPath.Child("ipFamilyPolicy"), *sp.IPFamilyPolicy, corev1.IPFamilyPolicySingleStack,
			corev1.IPFamilyPolicyPreferDualStack, corev1.IPFamilyPolicyRequireDualStack)...)
		if *sp.IPFamilyPolicy == corev1.IPFamilyPolicySingleStack && len(sp.IPFamilies) > 1 {
			errs = append(errs, field.Invalid(fp, sp.IPFamilies, "must contain at most one entry when `ipFamilyPolicy` is 'SingleStack'"))
		}
	}
	seen := sets.New[corev1.IPFamily]()
	for i, f := range sp.IPFamilies {
		errs = append(errs, strategy.ValidateEnum(fp.Index(i), f, corev1.IPv4Protocol, corev1.IPv6Protocol)...)
		if seen.Has(f) {
			errs = append(errs, field.Duplicate(fp.Index(i), f))
		}
		seen.Insert(f)
	}
	for i, ip := range sp.ClusterIPs {
		if parsed := net.ParseIP(ip); parsed != nil && i < len(sp.IPFamilies) && ipFamilyOf(parsed) != sp.IPFamilies[i] {
			errs = append(errs, field.Invalid(strategy.SpecPath.Child("clusterIPs").Index(i), ip,
				fmt.Sprintf("expected an %s value as indicated by `ipFamilies[%d]`", sp.IPFamilies[i], i)))
		}
	}
	return errs
}
