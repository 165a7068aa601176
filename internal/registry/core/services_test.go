package core

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

func newService() *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", ResourceVersion: "4"},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": "web"},
			Ports:    []corev1.ServicePort{{Port: 80}},
		},
	}
}

func TestServiceDefaults(t *testing.T) {
	s := newService()
	s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "1.2.3.4"}}
	expectValid(t, createService(t, s))
	sp := s.Spec
	checks := map[string][2]any{
		"type":                  {sp.Type, corev1.ServiceTypeClusterIP},
		"sessionAffinity":       {sp.SessionAffinity, corev1.ServiceAffinityNone},
		"protocol":              {sp.Ports[0].Protocol, corev1.ProtocolTCP},
		"targetPort":            {sp.Ports[0].TargetPort, intstr.FromInt32(80)},
		"ipFamilies":            {len(sp.IPFamilies) == 1 && sp.IPFamilies[0] == corev1.IPv4Protocol, true},
		"ipFamilyPolicy":        {*sp.IPFamilyPolicy, corev1.IPFamilyPolicySingleStack},
		"internalTrafficPolicy": {*sp.InternalTrafficPolicy, corev1.ServiceInternalTrafficPolicyCluster},
		"externalTrafficPolicy": {sp.ExternalTrafficPolicy, corev1.ServiceExternalTrafficPolicy("")},
		"clusterIP unallocated": {sp.ClusterIP, ""},
		"status reset":          {len(s.Status.LoadBalancer.Ingress), 0},
	}
	for name, c := range checks {
		if c[0] != c[1] {
			t.Errorf("%s = %v, want %v", name, c[0], c[1])
		}
	}

	np := newService()
	np.Spec.Type = corev1.ServiceTypeLoadBalancer
	np.Spec.ClusterIP = "10.96.0.10"
	expectValid(t, createService(t, np))
	if np.Spec.ExternalTrafficPolicy != corev1.ServiceExternalTrafficPolicyCluster || !*np.Spec.AllocateLoadBalancerNodePorts ||
		len(np.Spec.ClusterIPs) != 1 || np.Spec.ClusterIPs[0] != "10.96.0.10" {
		t.Errorf("load balancer defaults: %+v", np.Spec)
	}
}

func TestServiceValidation(t *testing.T) {
	cases := map[string]struct {
		mutate func(*corev1.Service)
		want   []string
	}{
		"name starts with digit ok": {func(s *corev1.Service) { s.Name = "1web" }, nil},
		"name with dot":             {func(s *corev1.Service) { s.Name = "web.app" }, []string{"metadata.name:FieldValueInvalid"}},
		"bad type":                  {func(s *corev1.Service) { s.Spec.Type = "Magic" }, []string{"spec.type:FieldValueNotSupported"}},
		"no ports":                  {func(s *corev1.Service) { s.Spec.Ports = nil }, []string{"spec.ports:FieldValueRequired"}},
		"headless without ports":    {func(s *corev1.Service) { s.Spec.Ports, s.Spec.ClusterIP = nil, "None" }, nil},
		"port zero":                 {func(s *corev1.Service) { s.Spec.Ports[0].Port = 0; s.Spec.Ports[0].TargetPort = intstr.FromInt32(8080) }, []string{"spec.ports[0].port:FieldValueInvalid"}},
		"port too big":              {func(s *corev1.Service) { s.Spec.Ports[0].Port = 65536 }, []string{"spec.ports[0].port:FieldValueInvalid", "spec.ports[0].targetPort:FieldValueInvalid"}},
		"bad protocol":              {func(s *corev1.Service) { s.Spec.Ports[0].Protocol = "ICMP" }, []string{"spec.ports[0].protocol:FieldValueNotSupported"}},
		"unnamed second port": {func(s *corev1.Service) {
			s.Spec.Ports = []corev1.ServicePort{{Name: "http", Port: 80}, {Port: 443}}
		}, []string{"spec.ports[1].name:FieldValueRequired"}},
		"duplicate names": {func(s *corev1.Service) {
			s.Spec.Ports = []corev1.ServicePort{{Name: "http", Port: 80}, {Name: "http", Port: 81}}
		}, []string{"spec.ports[1].name:FieldValueDuplicate"}},
		"duplicate port": {func(s *corev1.Service) {
			s.Spec.Ports = []corev1.ServicePort{{Name: "a", Port: 80}, {Name: "b", Port: 80}}
		}, []string{"spec.ports[1]:FieldValueDuplicate"}},
		"nodePort on ClusterIP":     {func(s *corev1.Service) { s.Spec.Ports[0].NodePort = 30080 }, []string{"spec.ports[0].nodePort:FieldValueForbidden"}},
		"bad target port name":      {func(s *corev1.Service) { s.Spec.Ports[0].TargetPort = intstr.FromString("Http_1") }, []string{"spec.ports[0].targetPort:FieldValueInvalid"}},
		"bad selector":              {func(s *corev1.Service) { s.Spec.Selector = map[string]string{"app": "a b"} }, []string{"spec.selector:FieldValueInvalid"}},
		"bad affinity":              {func(s *corev1.Service) { s.Spec.SessionAffinity = "Sticky" }, []string{"spec.sessionAffinity:FieldValueNotSupported"}},
		"bad cluster IP":            {func(s *corev1.Service) { s.Spec.ClusterIP = "10.0.0.300" }, []string{"spec.clusterIPs[0]:FieldValueInvalid"}},
		"headless NodePort":         {func(s *corev1.Service) { s.Spec.ClusterIP, s.Spec.Type = "None", "NodePort" }, []string{"spec.clusterIPs[0]:FieldValueInvalid"}},
		"bad external IP":           {func(s *corev1.Service) { s.Spec.ExternalIPs = []string{"nope"} }, []string{"spec.externalIPs[0]:FieldValueInvalid"}},
		"externalName missing":      {func(s *corev1.Service) { s.Spec.Type = "ExternalName" }, []string{"spec.externalName:FieldValueRequired"}},
		"externalName":              {func(s *corev1.Service) { s.Spec.Type, s.Spec.ExternalName = "ExternalName", "db.example.com" }, nil},
		"local policy on ClusterIP": {func(s *corev1.Service) { s.Spec.ExternalTrafficPolicy = "Local" }, []string{"spec.externalTrafficPolicy:FieldValueInvalid"}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			s := newService()
			c.mutate(s)
			expectErrors(t, createService(t, s), c.want...)
		})
	}
}

// storedService is a NodePort service as the server holds it once it has
// allocated its cluster IP and node port.
func storedService(t *testing.T) *corev1.Service {
	s := newService()
	s.Spec.Type = corev1.ServiceTypeNodePort
	s.Spec.ClusterIP = "10.96.0.20"
	s.Spec.Ports[0].NodePort = 30080
	expectValid(t, createService(t, s))
	return s
}

func TestServiceUpdate(t *testing.T) {
	r := lookup(t, "services")
	old := storedService(t)
	old.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{Hostname: "lb"}}

	// A client that leaves out what the server allocated keeps it.
	s := newService()
	s.Spec.Type = corev1.ServiceTypeNodePort
	expectValid(t, updateService(r, s, old))
	if s.Spec.ClusterIP != "10.96.0.20" || s.Spec.ClusterIPs[0] != "10.96.0.20" || s.Spec.Ports[0].NodePort != 30080 {
		t.Errorf("allocated values not carried over: %+v", s.Spec)
	}
	if len(s.Status.LoadBalancer.Ingress) != 1 {
		t.Error("main update changed status")
	}

	// Changing the type to ClusterIP drops the node port kept from old.
	s = old.DeepCopy()
	s.Spec.Type = corev1.ServiceTypeClusterIP
	expectValid(t, updateService(r, s, old))
	if s.Spec.Ports[0].NodePort != 0 || s.Spec.ExternalTrafficPolicy != "" {
		t.Errorf("type change kept %d / %q", s.Spec.Ports[0].NodePort, s.Spec.ExternalTrafficPolicy)
	}

	s = old.DeepCopy()
	s.Spec.ClusterIP, s.Spec.ClusterIPs = "10.96.0.21", nil
	expectErrors(t, updateService(r, s, old), "spec.clusterIPs[0]:FieldValueInvalid")

	// To ExternalName and back is allowed to drop the cluster IP.
	s = old.DeepCopy()
	s.Spec.Type, s.Spec.ExternalName = corev1.ServiceTypeExternalName, "db.example.com"
	expectValid(t, updateService(r, s, old))
	if s.Spec.ClusterIP != "" || s.Spec.IPFamilies != nil || s.Spec.Ports[0].NodePort != 0 {
		t.Errorf("ExternalName kept %q %v %d", s.Spec.ClusterIP, s.Spec.IPFamilies, s.Spec.Ports[0].NodePort)
	}
}

func TestServiceStatusAndAttrs(t *testing.T) {
	r := lookup(t, "services")
	old := storedService(t)
	s := old.DeepCopy()
	s.Spec.Selector = map[string]string{"ignored": "yes"}
	s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "192.0.2.1"}}
	expectValid(t, updateStatus(r, s, old))
	if s.Spec.Selector["app"] != "web" || s.Status.LoadBalancer.Ingress[0].IP != "192.0.2.1" {
		t.Errorf("status update: selector %v status %v", s.Spec.Selector, s.Status)
	}
	s.Status.LoadBalancer.Ingress[0].IP = "x"
	expectErrors(t, updateStatus(r, s, old), "status.loadBalancer.ingress[0].ip:FieldValueInvalid")

	expectFields(t, r, old, fields.Set{"metadata.name": "web", "metadata.namespace": "default",
		"spec.clusterIP": "10.96.0.20", "spec.type": "NodePort"})
}

// createService and updateService run the kind's hooks as the server
// does, with the addressing its admission fills (cluster IPs in step, IP
// families) before validation.
func createService(t *testing.T, s *corev1.Service) field.ErrorList {
	defaultAddressing(&s.Spec)
	return create(lookup(t, "services"), s)
}

func updateService(r *registry.Resource, s, old *corev1.Service) field.ErrorList {
	defaultAddressing(&s.Spec)
	return update(r, s, old)
}
