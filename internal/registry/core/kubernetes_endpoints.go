package core

import (
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// advertisedEndpoints is the Endpoints default/kubernetes as
// kube-apiserver keeps it: one subset with the server's address and the
// port "https", labelled so the mirroring controller leaves it alone (the
// server writes the EndpointSlice itself, see package discoveryv1).
func advertisedEndpoints(a registry.Advertisement) []runtime.Object {
	return []runtime.Object{&corev1.Endpoints{
		ObjectMeta: metav1.ObjectMeta{Name: "kubernetes", Namespace: "default",
			Labels: map[string]string{discoveryv1.LabelSkipMirror: "true"}},
		Subsets: []corev1.EndpointSubset{{
			Addresses: []corev1.EndpointAddress{{IP: a.IP}},
			Ports:     []corev1.EndpointPort{{Name: "https", Port: a.Port, Protocol: corev1.ProtocolTCP}},
		}},
	}}
}
