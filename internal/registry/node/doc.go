// Package node describes the node.k8s.io/v1 resources: runtimeclasses,
// with kube-apiserver's validation of the handler (a DNS label, immutable),
// the pod overhead and the scheduling constraints.
package node
