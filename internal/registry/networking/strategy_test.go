package networking

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestNetworkPolicyDefaults(t *testing.T) {
	r := lookup(t, "networkpolicies")
	np := &networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"},
		Spec: networkingv1.NetworkPolicySpec{
			Ingress: []networkingv1.NetworkPolicyIngressRule{{Ports: []networkingv1.NetworkPolicyPort{{Port: new(intstr.FromInt32(80))}}}},
			Egress:  []networkingv1.NetworkPolicyEgressRule{{}},
		},
	}
	expectValid(t, create(r, np))
	if got := np.Spec.PolicyTypes; len(got) != 2 || got[0] != networkingv1.PolicyTypeIngress || got[1] != networkingv1.PolicyTypeEgress {
		t.Errorf("policyTypes = %v, want [Ingress Egress]", got)
	}
	if p := np.Spec.Ingress[0].Ports[0].Protocol; p == nil || *p != corev1.ProtocolTCP {
		t.Errorf("port protocol = %v, want TCP", p)
	}
	expectFields(t, r, np, fields.Set{"metadata.name": "p", "metadata.namespace": "ns"})
}

func TestNetworkPolicyKeepsStoredCIDRs(t *testing.T) {
	r := lookup(t, "networkpolicies")
	old := &networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", ResourceVersion: "3"},
		Spec: networkingv1.NetworkPolicySpec{PolicyTypes: []networkingv1.PolicyType{"Ingress"},
			Ingress: []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "10.0.0.1/8"}}}}}},
	}
	np := old.DeepCopy()
	np.Labels = map[string]string{"a": "b"}
	expectValid(t, update(r, np, old)) // stored under looser rules: kept
	fresh := old.DeepCopy()
	fresh.ResourceVersion = ""
	expectErrors(t, create(r, fresh), "spec.ingress[0].from[0].ipBlock.cidr:FieldValueInvalid")
}

func TestIngressStatusKeptAndReset(t *testing.T) {
	r := lookup(t, "ingresses")
	ing := &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Name: "i", Namespace: "ns", ResourceVersion: "2"},
		Spec: networkingv1.IngressSpec{DefaultBackend: &networkingv1.IngressBackend{
			Service: &networkingv1.IngressServiceBackend{Name: "s", Port: networkingv1.ServiceBackendPort{Number: 80}}}},
		Status: networkingv1.IngressStatus{LoadBalancer: networkingv1.IngressLoadBalancerStatus{
			Ingress: []networkingv1.IngressLoadBalancerIngress{{IP: "192.0.2.1"}}}},
	}
	created := ing.DeepCopy()
	expectValid(t, create(r, created))
	if len(created.Status.LoadBalancer.Ingress) != 0 {
		t.Error("create kept the status")
	}
	upd := ing.DeepCopy()
	upd.Status = networkingv1.IngressStatus{}
	expectValid(t, update(r, upd, ing))
	if len(upd.Status.LoadBalancer.Ingress) != 1 {
		t.Error("update dropped the status")
	}
	kept := ing.DeepCopy()
	kept.Annotations = map[string]string{"status-patched": "yes"}
	expectValid(t, updateStatus(r, kept, ing))
	if kept.Annotations["status-patched"] != "yes" {
		t.Error("status update dropped an annotation (kube-apiserver keeps metadata changes)")
	}
	st := ing.DeepCopy()
	st.Spec.DefaultBackend = nil
	st.Status.LoadBalancer.Ingress[0].IP = "1.2.3"
	expectErrors(t, updateStatus(r, st, ing), "status.loadBalancer.ingress[0].ip:FieldValueInvalid")
	if st.Spec.DefaultBackend == nil {
		t.Error("status update changed the spec")
	}
}

func TestIngressUpdateKeepsStoredWildcardRule(t *testing.T) {
	r := lookup(t, "ingresses")
	prefix := networkingv1.PathTypePrefix
	old := &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Name: "i", Namespace: "ns", ResourceVersion: "2"},
		Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{Host: "*.a.com",
			IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{
				Path: "rel", PathType: &prefix, Backend: networkingv1.IngressBackend{
					Service: &networkingv1.IngressServiceBackend{Name: "s", Port: networkingv1.ServiceBackendPort{Number: 80}}}}}}}}}},
	}
	upd := old.DeepCopy()
	upd.Annotations = map[string]string{"x": "y"}
	expectValid(t, update(r, upd, old))
}

func TestServiceCIDRBootstrap(t *testing.T) {
	r := lookup(t, "servicecidrs")
	objs := r.Bootstrap()
	c, ok := objs[0].(*networkingv1.ServiceCIDR)
	if len(objs) != 1 || !ok || c.Name != "kubernetes" || c.Spec.CIDRs[0] != "10.96.0.0/12" {
		t.Fatalf("bootstrap = %v", objs)
	}
	if len(c.Status.Conditions) != 1 || c.Status.Conditions[0].Type != "Ready" {
		t.Errorf("bootstrap status = %v", c.Status)
	}
	expectValid(t, create(r, c.DeepCopy()))
}
