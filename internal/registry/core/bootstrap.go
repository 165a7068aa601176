package core

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// systemNamespaces exist in every Kubernetes cluster.
var systemNamespaces = []string{"default", "kube-system", "kube-public", "kube-node-lease"}

func bootstrapNamespaces() []runtime.Object {
	out := make([]runtime.Object, len(systemNamespaces))
	for i, name := range systemNamespaces {
		out[i] = &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	}
	return out
}

// bootstrapServices is the kubernetes service in default, on the first
// address of the service range.
func bootstrapServices() []runtime.Object {
	return []runtime.Object{&corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "kubernetes", Namespace: "default",
			Labels: map[string]string{"component": "apiserver", "provider": "kubernetes"}},
		Spec: corev1.ServiceSpec{
			Type:      corev1.ServiceTypeClusterIP,
			ClusterIP: KubernetesServiceIP,
			Ports: []corev1.ServicePort{{Name: "https", Port: 443, Protocol: corev1.ProtocolTCP,
				TargetPort: intstr.FromInt32(6443)}},
			SessionAffinity: corev1.ServiceAffinityNone,
		},
	}}
}
