package conformance

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// crudIP names the IPAddress rows: obj-a is 192.0.2.1, obj-b 192.0.2.2, …
// (addresses of TEST-NET-1, in order, as the rows' names are).
func crudIP(n string) string {
	ips := map[string]string{"obj-a": "192.0.2.1", "obj-b": "192.0.2.2", "obj-c": "192.0.2.3", "obj-d": "192.0.2.4", "missing": "192.0.2.99"}
	ip, ok := ips[n]
	if !ok {
		panic("no address for " + n)
	}
	return ip
}

func networkCases() []crudCase {
	net := networkingv1.SchemeGroupVersion
	prefix := networkingv1.PathTypePrefix
	return []crudCase{
		{
			gvr: net.WithResource("ingresses"), kind: "Ingress", namespaced: true,
			newObj: func(n string, l map[string]string) runtime.Object {
				return &networkingv1.Ingress{ObjectMeta: crudMeta(n, l, true), Spec: networkingv1.IngressSpec{
					Rules: []networkingv1.IngressRule{{Host: "crud.example.com", IngressRuleValue: networkingv1.IngressRuleValue{
						HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{Path: "/", PathType: &prefix,
							Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
								Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}}}}}}}},
				}}
			},
			setStatus: func(o runtime.Object) {
				o.(*networkingv1.Ingress).Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{{IP: "192.0.2.10"}}
			},
			statusSet: func(o runtime.Object) bool {
				lb := o.(*networkingv1.Ingress).Status.LoadBalancer.Ingress
				return len(lb) == 1 && lb[0].IP == "192.0.2.10"
			},
			statusKeepsLabels: true,
		},
		{
			gvr: net.WithResource("ingressclasses"), kind: "IngressClass",
			newObj: func(n string, l map[string]string) runtime.Object {
				return &networkingv1.IngressClass{ObjectMeta: crudMeta(n, l, false), Spec: networkingv1.IngressClassSpec{Controller: "example.com/crud"}}
			},
		},
		{
			gvr: net.WithResource("networkpolicies"), kind: "NetworkPolicy", namespaced: true,
			newObj: func(n string, l map[string]string) runtime.Object {
				return &networkingv1.NetworkPolicy{ObjectMeta: crudMeta(n, l, true), Spec: networkingv1.NetworkPolicySpec{
					PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": n}},
					PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
					Ingress:     []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{}}}}},
				}}
			},
		},
		{
			gvr: net.WithResource("ipaddresses"), kind: "IPAddress", name: crudIP,
			newObj: func(n string, l map[string]string) runtime.Object {
				return &networkingv1.IPAddress{ObjectMeta: crudMeta(n, l, false), Spec: networkingv1.IPAddressSpec{
					ParentRef: &networkingv1.ParentReference{Resource: "services", Namespace: crudNamespace, Name: "crud-parent"}}}
			},
		},
		{
			gvr: net.WithResource("servicecidrs"), kind: "ServiceCIDR",
			newObj: func(n string, l map[string]string) runtime.Object {
				return &networkingv1.ServiceCIDR{ObjectMeta: crudMeta(n, l, false), Spec: networkingv1.ServiceCIDRSpec{CIDRs: []string{"198.51.100.0/24"}}}
			},
			setStatus: func(o runtime.Object) {
				o.(*networkingv1.ServiceCIDR).Status.Conditions = []metav1.Condition{setByTest()}
			},
			statusSet: func(o runtime.Object) bool { return hasSetByTest(o.(*networkingv1.ServiceCIDR).Status.Conditions) },
		},
		{
			gvr: discoveryv1.SchemeGroupVersion.WithResource("endpointslices"), kind: "EndpointSlice", namespaced: true,
			newObj: func(n string, l map[string]string) runtime.Object {
				port, proto, ready := int32(8080), corev1.ProtocolTCP, true
				return &discoveryv1.EndpointSlice{ObjectMeta: crudMeta(n, l, true), AddressType: discoveryv1.AddressTypeIPv4,
					Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.1.2.3"}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}}},
					Ports:     []discoveryv1.EndpointPort{{Name: new("http"), Port: &port, Protocol: &proto}}}
			},
		},
		{
			gvr: eventsv1.SchemeGroupVersion.WithResource("events"), kind: "Event", namespaced: true,
			newObj: func(n string, l map[string]string) runtime.Object {
				return &eventsv1.Event{ObjectMeta: crudMeta(n, l, true), EventTime: metav1.NewMicroTime(time.Now()),
					ReportingController: "example.com/crud", ReportingInstance: "crud-1", Action: "Testing", Reason: "Tested",
					Note: "by client-go", Type: corev1.EventTypeNormal,
					Regarding: corev1.ObjectReference{Kind: "Pod", Namespace: crudNamespace, Name: "p", APIVersion: "v1"}}
			},
		},
	}
}
