package discoveryv1

import (
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// advertisedSlice is the EndpointSlice default/kubernetes as
// kube-apiserver keeps it next to the Endpoints: named after the Service,
// labelled only with kubernetes.io/service-name (no managed-by: no
// controller touches it), one ready endpoint with the server's address,
// the port "https".
func advertisedSlice(a registry.Advertisement) []runtime.Object {
	t := discoveryv1.AddressTypeIPv4
	if ip, err := netip.ParseAddr(a.IP); err == nil && ip.Is6() && !ip.Is4In6() {
		t = discoveryv1.AddressTypeIPv6
	}
	ready := true
	name, port, proto := "https", a.Port, corev1.ProtocolTCP
	return []runtime.Object{&discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: "kubernetes", Namespace: "default",
			Labels: map[string]string{discoveryv1.LabelServiceName: "kubernetes"}},
		AddressType: t,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{a.IP}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}}},
		Ports:       []discoveryv1.EndpointPort{{Name: &name, Port: &port, Protocol: &proto}},
	}}
}
