package core

import (
	"net"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/printers"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

func servicesResource() *registry.Resource {
	return &registry.Resource{
		Version: "v1", Resource: "services", Kind: "Service", ListKind: "ServiceList", Singular: "service",
		ShortNames: []string{"svc"}, Categories: []string{"all"}, Namespaced: true,
		NoGeneration: true, // as kube-apiserver: no metadata.generation
		New:          func() runtime.Object { return &corev1.Service{} },
		NewList:      func() runtime.Object { return &corev1.ServiceList{} },
		Strategy: strategy.CreateOnUpdate[*corev1.Service]{Typed: strategy.Typed[*corev1.Service]{
			PrepareCreate:  func(s *corev1.Service) { s.Status = corev1.ServiceStatus{} },
			PrepareUpdate:  prepareServiceUpdate,
			Defaults:       defaultService,
			ValidateNew:    validateService,
			ValidateChange: validateServiceUpdate,
		}},
		Status: strategy.TypedStatus[*corev1.Service]{
			PrepareUpdate: func(s, old *corev1.Service) {
				s.Spec = old.Spec
				// metadata changes stay, as in kube-apiserver: its status
				// strategy for the kind resets the spec only
			},
			ValidateChange: validateServiceStatusUpdate,
		},
		Subresources:        []registry.Subresource{serviceProxySubresource()},
		ReturnDeletedObject: true, // as kube-apiserver: DELETE answers the service
		Bootstrap:           bootstrapServices,
		Admit:               admitService,
		Quota:               serviceQuota{},
		AfterDelete:         releaseService,
		Attrs: strategy.Attrs(true, func(s *corev1.Service, set fields.Set) {
			set["spec.clusterIP"] = s.Spec.ClusterIP
			set["spec.type"] = string(s.Spec.Type)
		}),
		Table: printers.For("", "Service"),
	}
}

// serviceType is the type of a possibly undefaulted service.
func serviceType(s *corev1.Service) corev1.ServiceType {
	if s.Spec.Type == "" {
		return corev1.ServiceTypeClusterIP
	}
	return s.Spec.Type
}

func needsNodePorts(t corev1.ServiceType) bool {
	return t == corev1.ServiceTypeNodePort || t == corev1.ServiceTypeLoadBalancer
}

// prepareServiceUpdate keeps old's status, carries over what the server
// allocated (cluster IPs, node ports) when the update leaves it out, and
// drops allocated fields the new type no longer uses, so that a client can
// send a service without them (kubectl apply, replace) or change its type.
func prepareServiceUpdate(s, old *corev1.Service) {
	s.Status = old.Status
	newType, oldType := serviceType(s), serviceType(old)
	switch {
	case newType == corev1.ServiceTypeExternalName && oldType != corev1.ServiceTypeExternalName:
		if s.Spec.ClusterIP == old.Spec.ClusterIP {
			s.Spec.ClusterIP, s.Spec.ClusterIPs = "", nil
		}
		s.Spec.IPFamilies, s.Spec.IPFamilyPolicy = nil, nil
	case newType != corev1.ServiceTypeExternalName && oldType != corev1.ServiceTypeExternalName &&
		s.Spec.ClusterIP == "" && len(s.Spec.ClusterIPs) == 0:
		s.Spec.ClusterIP, s.Spec.ClusterIPs = old.Spec.ClusterIP, old.Spec.ClusterIPs
		if len(s.Spec.IPFamilies) == 0 {
			s.Spec.IPFamilies = old.Spec.IPFamilies
		}
		if s.Spec.IPFamilyPolicy == nil {
			s.Spec.IPFamilyPolicy = old.Spec.IPFamilyPolicy
		}
	}
	carryNodePorts(s, old, newType, oldType)
	if newType != corev1.ServiceTypeLoadBalancer && oldType == corev1.ServiceTypeLoadBalancer {
		s.Spec.AllocateLoadBalancerNodePorts = nil
	}
	if !needsNodePorts(newType) && needsNodePorts(oldType) && s.Spec.ExternalTrafficPolicy == old.Spec.ExternalTrafficPolicy {
		s.Spec.ExternalTrafficPolicy = ""
	}
}

// carryNodePorts gives ports without a node port the one of old's port of
// the same name while the type keeps node ports, and clears node ports the
// client kept from old when the new type has none.
func carryNodePorts(s, old *corev1.Service, newType, oldType corev1.ServiceType) {
	oldPorts := map[string]int32{}
	for _, p := range old.Spec.Ports {
		oldPorts[p.Name] = p.NodePort
	}
	for i := range s.Spec.Ports {
		p := &s.Spec.Ports[i]
		switch {
		case needsNodePorts(newType) && needsNodePorts(oldType) && p.NodePort == 0:
			p.NodePort = oldPorts[p.Name]
		case !needsNodePorts(newType) && needsNodePorts(oldType) && p.NodePort != 0 && p.NodePort == oldPorts[p.Name]:
			p.NodePort = 0
		}
	}
	if !needsNodePorts(newType) && s.Spec.HealthCheckNodePort == old.Spec.HealthCheckNodePort {
		s.Spec.HealthCheckNodePort = 0
	}
}

// defaultService fills type, session affinity, port protocols and target
// ports, traffic policies, and the IP family fields (single-stack IPv4
// unless the cluster IPs say otherwise). It keeps spec.clusterIP and
// spec.clusterIPs[0] in step. It allocates nothing.
func defaultService(s *corev1.Service) {
	sp := &s.Spec
	if sp.SessionAffinity == "" {
		sp.SessionAffinity = corev1.ServiceAffinityNone
	}
	switch sp.SessionAffinity {
	case corev1.ServiceAffinityNone:
		sp.SessionAffinityConfig = nil
	case corev1.ServiceAffinityClientIP:
		if c := sp.SessionAffinityConfig; c == nil || c.ClientIP == nil || c.ClientIP.TimeoutSeconds == nil {
			sp.SessionAffinityConfig = &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{
				TimeoutSeconds: new(corev1.DefaultClientIPServiceAffinitySeconds)}}
		}
	}
	if sp.Type == "" {
		sp.Type = corev1.ServiceTypeClusterIP
	}
	for i := range sp.Ports {
		p := &sp.Ports[i]
		if p.Protocol == "" {
			p.Protocol = corev1.ProtocolTCP
		}
		if p.TargetPort == intstr.FromInt32(0) || p.TargetPort == intstr.FromString("") {
			p.TargetPort = intstr.FromInt32(p.Port)
		}
	}
	external := needsNodePorts(sp.Type) || len(sp.ExternalIPs) > 0
	if external && sp.ExternalTrafficPolicy == "" {
		sp.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyCluster
	}
	if sp.InternalTrafficPolicy == nil && sp.Type != corev1.ServiceTypeExternalName {
		sp.InternalTrafficPolicy = new(corev1.ServiceInternalTrafficPolicyCluster)
	}
	if sp.Type == corev1.ServiceTypeLoadBalancer && sp.AllocateLoadBalancerNodePorts == nil {
		sp.AllocateLoadBalancerNodePorts = new(true)
	}
	if sp.Type == corev1.ServiceTypeLoadBalancer {
		for i := range s.Status.LoadBalancer.Ingress {
			if ing := &s.Status.LoadBalancer.Ingress[i]; ing.IP != "" && ing.IPMode == nil {
				ing.IPMode = new(corev1.LoadBalancerIPModeVIP)
			}
		}
	}
}

// defaultAddressing keeps clusterIP and clusterIPs in step and fills the
// IP families and policy, as kube-apiserver's service storage does when it
// allocates, after the field manager: the admission hook calls it, so the
// writer does not own these fields.
func defaultAddressing(sp *corev1.ServiceSpec) {
	if sp.ClusterIP != "" && len(sp.ClusterIPs) == 0 {
		sp.ClusterIPs = []string{sp.ClusterIP}
	} else if sp.ClusterIP == "" && len(sp.ClusterIPs) > 0 {
		sp.ClusterIP = sp.ClusterIPs[0]
	}
	if sp.Type != corev1.ServiceTypeExternalName {
		defaultIPFamilies(sp)
	}
}

func defaultIPFamilies(sp *corev1.ServiceSpec) {
	if len(sp.IPFamilies) == 0 {
		for _, ip := range sp.ClusterIPs {
			if p := net.ParseIP(ip); p != nil {
				sp.IPFamilies = append(sp.IPFamilies, ipFamilyOf(p))
			}
		}
		if len(sp.IPFamilies) == 0 {
			sp.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol}
		}
	}
	if sp.IPFamilyPolicy == nil {
		sp.IPFamilyPolicy = new(corev1.IPFamilyPolicySingleStack)
		if len(sp.IPFamilies) > 1 {
			*sp.IPFamilyPolicy = corev1.IPFamilyPolicyPreferDualStack
		}
	}
}

func ipFamilyOf(ip net.IP) corev1.IPFamily {
	if ip.To4() != nil {
		return corev1.IPv4Protocol
	}
	return corev1.IPv6Protocol
}

func validateService(s *corev1.Service) field.ErrorList {
	errs := strategy.ValidateMeta(&s.ObjectMeta, true, apivalidation.NameIsDNSLabel)
	return append(errs, validateServiceSpec(s)...)
}

// validateServiceUpdate also forbids changing allocated cluster IPs
// (except when the service becomes or stops being ExternalName).
func validateServiceUpdate(s, old *corev1.Service) field.ErrorList {
	errs := strategy.ValidateMetaUpdate(&s.ObjectMeta, &old.ObjectMeta)
	errs = append(errs, validateServiceSpec(s)...)
	if s.Spec.Type == corev1.ServiceTypeExternalName || old.Spec.Type == corev1.ServiceTypeExternalName {
		return errs
	}
	ips, oldIPs := s.Spec.ClusterIPs, old.Spec.ClusterIPs
	p := strategy.SpecPath.Child("clusterIPs").Index(0)
	switch {
	case len(oldIPs) > 0 && len(ips) == 0:
		errs = append(errs, field.Invalid(p, ips, "primary clusterIP can not be unset"))
	case len(oldIPs) > 0 && ips[0] != oldIPs[0]:
		errs = append(errs, field.Invalid(p, ips, "may not change once set"))
	}
	return errs
}

func validateServiceStatusUpdate(s, old *corev1.Service) field.ErrorList {
	errs := strategy.ValidateMetaUpdate(&s.ObjectMeta, &old.ObjectMeta)
	ip := field.NewPath("status", "loadBalancer", "ingress")
	for i, ing := range s.Status.LoadBalancer.Ingress {
		idx := ip.Index(i)
		if ing.IP != "" {
			errs = append(errs, strategy.ValidateIP(idx.Child("ip"), ing.IP)...)
		}
		if ing.IPMode != nil {
			errs = append(errs, strategy.ValidateEnum(idx.Child("ipMode"), *ing.IPMode, corev1.LoadBalancerIPModeVIP, corev1.LoadBalancerIPModeProxy)...)
		}
	}
	return errs
}
