// Package networking describes the networking.k8s.io/v1 resources:
// ingresses (with status, and kube-apiserver's DefaultIngressClass
// admission as the kind's Admit hook), ingressclasses, networkpolicies
// (policyTypes and port protocol defaults), ipaddresses and servicecidrs
// (with status, and the "kubernetes" ServiceCIDR of the service range that
// exists from the start). Validation follows kube-apiserver's messages and
// field paths.
package networking
