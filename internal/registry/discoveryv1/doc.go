// Package discoveryv1 describes the discovery.k8s.io/v1 resources:
// endpointslices, with kube-apiserver's defaults (port name "" and
// protocol TCP), validation (address type, addresses of that type, ports,
// hostnames) in the order kube-apiserver reports it, and generation
// tracking. (Named for its version so as not to be taken for the server's
// discovery documents, package internal/discovery.)
package discoveryv1
