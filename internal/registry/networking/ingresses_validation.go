package networking

import (
	"fmt"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/validate/content"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"

	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

var (
	supportedPathTypes   = []string{"Exact", "ImplementationSpecific", "Prefix"}
	invalidPathSequences = []string{"//", "/./", "/../", "%2f", "%2F"}
	invalidPathSuffixes  = []string{"/..", "/."}
)

// ingressOptions relax validation for what an update keeps of an object
// stored under older rules.
type ingressOptions struct {
	allowInvalidSecretName       bool
	allowInvalidWildcardHostRule bool
}

func validateIngressCreate(ing *networkingv1.Ingress) field.ErrorList {
	errs := validateIngress(ing, ingressOptions{})
	if v, ok := ing.Annotations[annotationIngressClass]; ok && ing.Spec.IngressClassName != nil && v != *ing.Spec.IngressClassName {
		errs = append(errs, field.Invalid(field.NewPath("annotations").Child(annotationIngressClass), v,
			"must match `ingressClassName` when both are specified"))
	}
	return errs
}

func validateIngressUpdate(ing, old *networkingv1.Ingress) field.ErrorList {
	errs := strategy.ValidateMetaUpdate(&ing.ObjectMeta, &old.ObjectMeta)
	opts := ingressOptions{}
	for _, tls := range old.Spec.TLS {
		if len(validateTLSSecretName(tls.SecretName)) > 0 {
			opts.allowInvalidSecretName = true
		}
	}
	for _, r := range old.Spec.Rules {
		if strings.Contains(r.Host, "*") && len(validateRuleValue(&r.IngressRuleValue, field.NewPath("spec"), ingressOptions{})) > 0 {
			opts.allowInvalidWildcardHostRule = true
		}
	}
	return append(errs, validateIngress(ing, opts)...)
}

func validateIngress(ing *networkingv1.Ingress, opts ingressOptions) field.ErrorList {
	errs := strategy.ValidateMeta(&ing.ObjectMeta, true, apivalidation.NameIsDNSSubdomain)
	return append(errs, validateIngressSpec(&ing.Spec, strategy.SpecPath, opts)...)
}

func validateIngressSpec(spec *networkingv1.IngressSpec, p *field.Path, opts ingressOptions) field.ErrorList {
	var errs field.ErrorList
	if len(spec.Rules) == 0 && spec.DefaultBackend == nil {
		errs = append(errs, field.Invalid(p, spec.Rules, "either `defaultBackend` or `rules` must be specified"))
	}
	if spec.DefaultBackend != nil {
		errs = append(errs, validateBackend(spec.DefaultBackend, p.Child("defaultBackend"))...)
	}
	for i := range spec.Rules {
		errs = append(errs, validateRule(&spec.Rules[i], p.Child("rules").Index(i), opts)...)
	}
	for i, tls := range spec.TLS {
		tp := p.Child("tls").Index(i)
		for j, host := range tls.Hosts {
			errs = append(errs, validateHost(tp.Child("hosts").Index(j), host)...)
		}
		if !opts.allowInvalidSecretName {
			for _, msg := range validateTLSSecretName(tls.SecretName) {
				errs = append(errs, field.Invalid(tp.Child("secretName"), tls.SecretName, msg))
			}
		}
	}
	if spec.IngressClassName != nil {
		for _, msg := range apivalidation.NameIsDNSSubdomain(*spec.IngressClassName, false) {
			errs = append(errs, field.Invalid(p.Child("ingressClassName"), *spec.IngressClassName, msg))
		}
	}
	return errs
}

func validateTLSSecretName(name string) []string {
	if name == "" {
		return nil
	}
	return apivalidation.NameIsDNSSubdomain(name, false)
}

// validateHost checks a host name, which may start with a "*." wildcard.
func validateHost(p *field.Path, host string) field.ErrorList {
	check := validation.IsDNS1123Subdomain
	if strings.Contains(host, "*") {
		check = validation.IsWildcardDNS1123Subdomain
	}
	return strategy.ValidateName(p, host, check)
}

func validateRule(r *networkingv1.IngressRule, p *field.Path, opts ingressOptions) field.ErrorList {
	var errs field.ErrorList
	wildcard := false
	if r.Host != "" {
		if netutils.ParseIPSloppy(r.Host) != nil {
			errs = append(errs, field.Invalid(p.Child("host"), r.Host, "must be a DNS name, not an IP address"))
		}
		wildcard = strings.Contains(r.Host, "*")
		errs = append(errs, validateHost(p.Child("host"), r.Host)...)
	}
	if !wildcard || !opts.allowInvalidWildcardHostRule {
		errs = append(errs, validateRuleValue(&r.IngressRuleValue, p, opts)...)
	}
	return errs
}

func validateRuleValue(v *networkingv1.IngressRuleValue, p *field.Path, _ ingressOptions) field.ErrorList {
	if v.HTTP == nil {
		return nil
	}
	hp := p.Child("http")
	var errs field.ErrorList
	if len(v.HTTP.Paths) == 0 {
		errs = append(errs, field.Required(hp.Child("paths"), ""))
	}
	for i := range v.HTTP.Paths {
		errs = append(errs, validatePath(&v.HTTP.Paths[i], hp.Child("paths").Index(i))...)
	}
	return errs
}

func validatePath(path *networkingv1.HTTPIngressPath, p *field.Path) field.ErrorList {
	if path.PathType == nil {
		return field.ErrorList{field.Required(p.Child("pathType"), "pathType must be specified")}
	}
	var errs field.ErrorList
	pp := p.Child("path")
	switch *path.PathType {
	case networkingv1.PathTypeExact, networkingv1.PathTypePrefix:
		if !strings.HasPrefix(path.Path, "/") {
			errs = append(errs, field.Invalid(pp, path.Path, "must be an absolute path"))
		}
		for _, seq := range invalidPathSequences {
			if strings.Contains(path.Path, seq) {
				errs = append(errs, field.Invalid(pp, path.Path, fmt.Sprintf("must not contain '%s'", seq)))
			}
		}
		for _, suffix := range invalidPathSuffixes {
			if strings.HasSuffix(path.Path, suffix) {
				errs = append(errs, field.Invalid(pp, path.Path, fmt.Sprintf("cannot end with '%s'", suffix)))
			}
		}
	case networkingv1.PathTypeImplementationSpecific:
		if path.Path != "" && !strings.HasPrefix(path.Path, "/") {
			errs = append(errs, field.Invalid(pp, path.Path, "must be an absolute path"))
		}
	default:
		errs = append(errs, field.NotSupported(p.Child("pathType"), *path.PathType, supportedPathTypes))
	}
	return append(errs, validateBackend(&path.Backend, p.Child("backend"))...)
}

// validateBackend checks a backend: a service (name and one of port name
// or number) or a resource, not both.
func validateBackend(b *networkingv1.IngressBackend, p *field.Path) field.ErrorList {
	switch {
	case b.Resource != nil && b.Service != nil:
		return field.ErrorList{field.Invalid(p, "", "cannot set both resource and service backends")}
	case b.Resource != nil:
		r := b.Resource
		rp := p.Child("resource")
		var errs field.ErrorList
		if r.APIGroup != nil {
			errs = append(errs, strategy.ValidateName(rp.Child("apiGroup"), *r.APIGroup, validation.IsDNS1123Subdomain)...)
		}
		errs = append(errs, validatePathSegment(rp.Child("kind"), r.Kind)...)
		return append(errs, validatePathSegment(rp.Child("name"), r.Name)...)
	case b.Service == nil:
		return field.ErrorList{field.Invalid(p, "", "resource or service backend is required")}
	}
	s := b.Service
	sp := p.Child("service")
	var errs field.ErrorList
	if s.Name == "" {
		errs = append(errs, field.Required(sp.Child("name"), ""))
	} else {
		// kube-apiserver v1.37 relaxes service names to DNS labels
		// (RelaxedServiceNameValidation).
		for _, msg := range apivalidation.NameIsDNSLabel(s.Name, false) {
			errs = append(errs, field.Invalid(sp.Child("name"), s.Name, msg))
		}
	}
	hasName, hasNumber := s.Port.Name != "", s.Port.Number != 0
	switch {
	case hasName && hasNumber:
		errs = append(errs, field.Invalid(p, "", "cannot set both port name & port number"))
	case hasName:
		for _, msg := range validation.IsValidPortName(s.Port.Name) {
			errs = append(errs, field.Invalid(sp.Child("port", "name"), s.Port.Name, msg))
		}
	case hasNumber:
		for _, msg := range validation.IsValidPortNum(int(s.Port.Number)) {
			errs = append(errs, field.Invalid(sp.Child("port", "number"), s.Port.Number, msg))
		}
	default:
		errs = append(errs, field.Required(p, "port name or number is required"))
	}
	return errs
}

// validatePathSegment requires a value usable as one segment of a URL path
// (a kind or name a reference points at).
func validatePathSegment(p *field.Path, v string) field.ErrorList {
	if v == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	return strategy.ValidateName(p, v, func(s string) []string { return content.IsPathSegmentName(s) })
}

func validateIngressLoadBalancer(st, old *networkingv1.IngressLoadBalancerStatus, p *field.Path) field.ErrorList {
	var oldIPs []string
	for _, in := range old.Ingress {
		if in.IP != "" {
			oldIPs = append(oldIPs, in.IP)
		}
	}
	var errs field.ErrorList
	for i, in := range st.Ingress {
		ip := p.Child("ingress").Index(i)
		if in.IP != "" {
			errs = append(errs, validation.IsValidIPForLegacyField(ip.Child("ip"), in.IP, true, oldIPs)...)
		}
		if in.Hostname != "" {
			errs = append(errs, strategy.ValidateName(ip.Child("hostname"), in.Hostname, validation.IsDNS1123Subdomain)...)
			if netutils.ParseIPSloppy(in.Hostname) != nil {
				errs = append(errs, field.Invalid(ip.Child("hostname"), in.Hostname, "must be a DNS name, not an IP address"))
			}
		}
	}
	return errs
}
