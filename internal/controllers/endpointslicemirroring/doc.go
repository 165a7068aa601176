// Package endpointslicemirroring is kube-controller-manager's
// "endpointslice-mirroring-controller": the v1 Endpoints that users write
// for Services without a selector are mirrored into EndpointSlices, so
// that consumers of slices see them.
//
// # Contract
//
//	err := endpointslicemirroring.Add(mgr, endpointslicemirroring.Options{})
//
// One sync (key namespace/name, shared by the Endpoints and its Service):
//
//   - Mirrored when the Endpoints exists, is not labelled
//     endpointslice.kubernetes.io/skip-mirror=true, carries no
//     leader-election annotation, and its Service exists without a
//     selector. Otherwise every slice this controller made for the name
//     is deleted.
//   - The slices are labelled kubernetes.io/service-name=<name> and
//     endpointslice.kubernetes.io/managed-by=
//     endpointslice-mirroring-controller.k8s.io over the Endpoints' own
//     labels, carry the Endpoints' annotations (but
//     last-change-trigger-time and kubectl's last-applied-configuration),
//     are controlled by the Endpoints (owner reference), and are named
//     "<name>-" plus a suffix.
//   - Each subset's addresses (at most MaxEndpointsPerSubset of them,
//     ready ones first) become endpoints of the slice of their address
//     type (IPv4/IPv6; invalid IPs are skipped) and the subset's ports:
//     ready for addresses, not ready for notReadyAddresses, with
//     nodeName, hostname and targetRef copied. Subsets with the same ports
//     share slices; a slice holds at most MaxEndpointsPerSubset endpoints.
//   - Slices are written only when their endpoints, ports, labels or
//     annotations differ; surplus slices are deleted.
package endpointslicemirroring
