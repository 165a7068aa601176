// Package endpointslice is kube-controller-manager's
// "endpointslice-controller": for every Service with a selector it keeps
// the discovery.k8s.io/v1 EndpointSlices that list the selected pods.
//
// # Contract
//
//	err := endpointslice.Add(mgr, endpointslice.Options{})
//
// The slices of a Service carry the labels kubernetes.io/service-name
// (the Service) and endpointslice.kubernetes.io/managed-by
// (endpointslice-controller.k8s.io), the Service's own labels, and
// service.kubernetes.io/headless="" when it has no cluster IP; a
// controller owner reference to the Service; generateName "<service>-".
// Slices of the Service's name that it does not own, of an address type it
// no longer has, or of a port set no pod offers any more are deleted.
//
// One sync (key namespace/name of the Service):
//
//   - Service gone, or without a selector, or ExternalName: nothing is
//     written (owned slices go with the Service through the garbage
//     collector).
//   - Address types: the Service's ipFamilies (IPv4, IPv6); else the
//     family of its cluster IP; a headless Service without families gets
//     both.
//   - Every selected pod with an IP that is not Succeeded/Failed is an
//     endpoint, terminating pods included: addresses = its IPs of the
//     slice's type; conditions ready (Ready and not terminating, or the
//     Service publishes not-ready addresses), serving (Ready), terminating
//     (deletionTimestamp set); nodeName; zone from the node's
//     topology.kubernetes.io/zone label; targetRef to the pod; hostname
//     when the pod's subdomain names the Service. A pod whose node does not
//     exist is left out (unless the Service publishes not-ready addresses)
//     and the sync is retried.
//   - Ports are the Service's ports resolved on each pod (name, protocol,
//     appProtocol, the pod's port number); pods offering the same ports
//     share slices. A slice holds at most MaxEndpointsPerSlice (100)
//     endpoints, of one address type and one port set.
//   - Minimal churn: an endpoint stays in the slice that holds it; a slice
//     is written only when one of its endpoints or its labels changed,
//     emptied slices are deleted, new endpoints go first into slices being
//     written anyway, then into the fullest unchanged slice that can take
//     them all, then into new slices. No endpoint appears in two slices.
//   - An address type with no endpoints keeps one placeholder slice (no
//     endpoints, no ports).
//   - A sync that would both create and delete slices of one address type
//     updates the slices it would delete instead (they keep their names),
//     as Kubernetes' reconciler does: a list never shows the placeholder
//     beside the slice that replaced it (the e2e EndpointSlice spec fails
//     on any slice without the Service's ports).
//   - Slices written carry endpoints.kubernetes.io/last-change-trigger-time
//     when the sync reflects a pod or Service change.
//   - The controller acts only on a cache that shows its own previous
//     writes (the generation it wrote of each slice, the absence of slices
//     it deleted); otherwise it waits for the slice events.
//   - Events on the Service: FailedToUpdateEndpointSlices "Error updating
//     Endpoint Slices for Service <ns>/<name>: <err>" (component
//     endpoint-slice-controller).
package endpointslice
