package networking

import (
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"

	"github.com/setpoint-dev/setpoint/internal/printers"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

func networkPoliciesResource() *registry.Resource {
	return &registry.Resource{
		Group: "networking.k8s.io", Version: "v1", Resource: "networkpolicies", Kind: "NetworkPolicy",
		ListKind: "NetworkPolicyList", Singular: "networkpolicy", ShortNames: []string{"netpol"}, Namespaced: true,
		New:     func() runtime.Object { return &networkingv1.NetworkPolicy{} },
		NewList: func() runtime.Object { return &networkingv1.NetworkPolicyList{} },
		Strategy: strategy.Typed[*networkingv1.NetworkPolicy]{
			Defaults: defaultNetworkPolicy,
			ValidateNew: func(np *networkingv1.NetworkPolicy) field.ErrorList {
				errs := strategy.ValidateMeta(&np.ObjectMeta, true, apivalidation.NameIsDNSSubdomain)
				return append(errs, validateNetworkPolicySpec(&np.Spec, policyOptions{})...)
			},
			ValidateChange: func(np, old *networkingv1.NetworkPolicy) field.ErrorList {
				errs := strategy.ValidateMetaUpdate(&np.ObjectMeta, &old.ObjectMeta)
				return append(errs, validateNetworkPolicySpec(&np.Spec, optionsFromOld(old))...)
			},
		},
		Attrs: strategy.Attrs[*networkingv1.NetworkPolicy](true, nil),
		Table: printers.For("networking.k8s.io", "NetworkPolicy"),
	}
}

// defaultNetworkPolicy: ports without a protocol are TCP; a policy naming
// no policyTypes is an Ingress policy, and an Egress one too when it has
// egress rules.
func defaultNetworkPolicy(np *networkingv1.NetworkPolicy) {
	for i := range np.Spec.Ingress {
		defaultPorts(np.Spec.Ingress[i].Ports)
	}
	for i := range np.Spec.Egress {
		defaultPorts(np.Spec.Egress[i].Ports)
	}
	if len(np.Spec.PolicyTypes) == 0 {
		np.Spec.PolicyTypes = []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}
		if len(np.Spec.Egress) != 0 {
			np.Spec.PolicyTypes = append(np.Spec.PolicyTypes, networkingv1.PolicyTypeEgress)
		}
	}
}

func defaultPorts(ports []networkingv1.NetworkPolicyPort) {
	for i := range ports {
		if ports[i].Protocol == nil {
			ports[i].Protocol = new(corev1.ProtocolTCP)
		}
	}
}

// policyOptions relax validation for what an update keeps of an object
// stored under older rules.
type policyOptions struct {
	allowInvalidLabelValue bool
	oldCIDRs               []string
}

func optionsFromOld(old *networkingv1.NetworkPolicy) policyOptions {
	var o policyOptions
	o.allowInvalidLabelValue = len(metav1validation.ValidateLabelSelector(&old.Spec.PodSelector,
		metav1validation.LabelSelectorValidationOptions{}, nil)) > 0
	for _, r := range old.Spec.Ingress {
		o.oldCIDRs = appendCIDRs(o.oldCIDRs, r.From)
	}
	for _, r := range old.Spec.Egress {
		o.oldCIDRs = appendCIDRs(o.oldCIDRs, r.To)
	}
	return o
}

func appendCIDRs(out []string, peers []networkingv1.NetworkPolicyPeer) []string {
	for _, p := range peers {
		if p.IPBlock != nil {
			out = append(out, p.IPBlock.CIDR)
			out = append(out, p.IPBlock.Except...)
		}
	}
	return out
}

// validateNetworkPolicySpec checks the spec. The errors kube-apiserver
// v1.37 reports from its declarative rules (a missing ipBlock.cidr) come
// after the others.
func validateNetworkPolicySpec(spec *networkingv1.NetworkPolicySpec, o policyOptions) field.ErrorList {
	var late field.ErrorList
	errs := validatePolicyRules(spec, o, &late)
	return append(errs, late...)
}

func validatePolicyRules(spec *networkingv1.NetworkPolicySpec, o policyOptions, late *field.ErrorList) field.ErrorList {
	p := strategy.SpecPath
	sel := metav1validation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: o.allowInvalidLabelValue}
	errs := metav1validation.ValidateLabelSelector(&spec.PodSelector, sel, p.Child("podSelector"))
	for i, r := range spec.Ingress {
		rp := p.Child("ingress").Index(i)
		for j := range r.Ports {
			errs = append(errs, validatePolicyPort(&r.Ports[j], rp.Child("ports").Index(j))...)
		}
		for j := range r.From {
			errs = append(errs, validatePeer(&r.From[j], sel, o, late, rp.Child("from").Index(j))...)
		}
	}
	for i, r := range spec.Egress {
		rp := p.Child("egress").Index(i)
		for j := range r.Ports {
			errs = append(errs, validatePolicyPort(&r.Ports[j], rp.Child("ports").Index(j))...)
		}
		for j := range r.To {
			errs = append(errs, validatePeer(&r.To[j], sel, o, late, rp.Child("to").Index(j))...)
		}
	}
	allowed := []string{string(networkingv1.PolicyTypeIngress), string(networkingv1.PolicyTypeEgress)}
	if len(spec.PolicyTypes) > len(allowed) {
		return append(errs, field.Invalid(p.Child("policyTypes"), &spec.PolicyTypes, "may not specify more than two policyTypes"))
	}
	for i, t := range spec.PolicyTypes {
		if t != networkingv1.PolicyTypeIngress && t != networkingv1.PolicyTypeEgress {
			errs = append(errs, field.NotSupported(p.Child("policyTypes").Index(i), t, allowed))
		}
	}
	return errs
}

func validatePolicyPort(port *networkingv1.NetworkPolicyPort, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if pr := port.Protocol; pr != nil && *pr != corev1.ProtocolTCP && *pr != corev1.ProtocolUDP && *pr != corev1.ProtocolSCTP {
		errs = append(errs, field.NotSupported(p.Child("protocol"), *pr, []string{"TCP", "UDP", "SCTP"}))
	}
	switch {
	case port.Port == nil:
		if port.EndPort != nil {
			errs = append(errs, field.Invalid(p.Child("endPort"), *port.EndPort, "may not be specified when `port` is not specified"))
		}
	case port.Port.Type == intstr.Int:
		for _, msg := range validation.IsValidPortNum(int(port.Port.IntVal)) {
			errs = append(errs, field.Invalid(p.Child("port"), port.Port.IntVal, msg))
		}
		if port.EndPort != nil {
			if *port.EndPort < port.Port.IntVal {
				errs = append(errs, field.Invalid(p.Child("endPort"), *port.EndPort, "must be greater than or equal to `port`"))
			}
			for _, msg := range validation.IsValidPortNum(int(*port.EndPort)) {
				errs = append(errs, field.Invalid(p.Child("endPort"), *port.EndPort, msg))
			}
		}
	default:
		if port.EndPort != nil {
			errs = append(errs, field.Invalid(p.Child("endPort"), *port.EndPort, "may not be specified when `port` is non-numeric"))
		}
		for _, msg := range validation.IsValidPortName(port.Port.StrVal) {
			errs = append(errs, field.Invalid(p.Child("port"), port.Port.StrVal, msg))
		}
	}
	return errs
}

func validatePeer(peer *networkingv1.NetworkPolicyPeer, sel metav1validation.LabelSelectorValidationOptions, o policyOptions, late *field.ErrorList, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	n := 0
	if peer.PodSelector != nil {
		n++
		errs = append(errs, metav1validation.ValidateLabelSelector(peer.PodSelector, sel, p.Child("podSelector"))...)
	}
	if peer.NamespaceSelector != nil {
		n++
		errs = append(errs, metav1validation.ValidateLabelSelector(peer.NamespaceSelector, sel, p.Child("namespaceSelector"))...)
	}
	if peer.IPBlock != nil {
		n++
		errs = append(errs, validateIPBlock(peer.IPBlock, o.oldCIDRs, late, p.Child("ipBlock"))...)
	}
	switch {
	case n == 0:
		errs = append(errs, field.Required(p, "must specify a peer"))
	case n > 1 && peer.IPBlock != nil:
		errs = append(errs, field.Forbidden(p, "may not specify both ipBlock and another peer"))
	}
	return errs
}

// validateIPBlock checks the CIDR and that every exception lies strictly
// inside it; CIDRs the stored policy already had are accepted as they are.
func validateIPBlock(b *networkingv1.IPBlock, oldCIDRs []string, late *field.ErrorList, p *field.Path) field.ErrorList {
	if b.CIDR == "" {
		*late = append(*late, field.Required(p.Child("cidr"), ""))
		return nil
	}
	errs := validation.IsValidCIDRForLegacyField(p.Child("cidr"), b.CIDR, true, oldCIDRs)
	_, cidr, err := netutils.ParseCIDRSloppy(b.CIDR)
	if err != nil {
		return errs
	}
	for i, ex := range b.Except {
		ep := p.Child("except").Index(i)
		errs = append(errs, validation.IsValidCIDRForLegacyField(ep, ex, true, oldCIDRs)...)
		_, exc, err := netutils.ParseCIDRSloppy(ex)
		if err != nil {
			continue
		}
		cidrLen, _ := cidr.Mask.Size()
		excLen, _ := exc.Mask.Size()
		if !cidr.Contains(exc.IP) || cidrLen >= excLen {
			errs = append(errs, field.Invalid(ep, ex, "must be a strict subset of `cidr`"))
		}
	}
	return errs
}
