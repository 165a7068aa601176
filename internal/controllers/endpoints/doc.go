// Package endpoints is kube-controller-manager's "endpoints-controller":
// it keeps, for every Service with a selector, the v1 Endpoints of the
// same name listing the pods the selector matches.
//
// # Contract
//
//	err := endpoints.Add(mgr, endpoints.Options{})
//
// One sync (key namespace/name of the Service):
//
//   - Service gone: its Endpoints are deleted. Service of type
//     ExternalName, or without a selector (nil; an empty selector selects
//     every pod): its Endpoints are left alone (users write them).
//   - Each selected pod with an IP, not Succeeded/Failed, and not being
//     deleted (unless spec.publishNotReadyAddresses) gives one address:
//     the pod IP of the Service's IP family, nodeName, targetRef (Pod,
//     namespace, name, uid) and, when the pod's spec.hostname is set and
//     its spec.subdomain names the Service, hostname. It goes under
//     addresses when the pod is Ready or the Service publishes not-ready
//     addresses, under notReadyAddresses otherwise.
//   - Each Service port is resolved per pod (a named targetPort through
//     the pod's container ports; a pod without it lacks that port). The
//     subsets group the addresses offering the same set of ports (an
//     address not ready for one port is not ready for all of them);
//     addresses are sorted by IP then pod UID, ports by name, number and
//     protocol. A headless Service without ports gets its addresses with
//     no ports; a Service with a cluster IP and no ports gets no subsets.
//   - Labels are the Service's, plus service.kubernetes.io/headless=""
//     when the Service has no cluster IP.
//   - Annotation endpoints.kubernetes.io/last-change-trigger-time: the
//     earliest pod or Service change the write reflects (RFC 3339 with
//     nanoseconds, UTC); removed when the write reflects none.
//   - More than 1000 addresses: truncated to 1000 (ready ones first,
//     spread over the subsets in proportion) with
//     endpoints.kubernetes.io/over-capacity: truncated.
//   - Nothing is written when subsets, labels and the capacity annotation
//     already agree (pod resourceVersions in targetRef are ignored).
//   - Write failures record FailedToCreateEndpoint / FailedToUpdateEndpoint
//     events (component endpoint-controller) and are retried; a create
//     refused because the namespace is terminating is dropped.
//
// Triggers: Service add/update/delete; pod add/delete and updates that
// change readiness, deletion, phase, IPs, labels, hostname or subdomain
// (for the Services selecting the pod before or after); Endpoints deleted
// (recreated at once); at start, every Endpoints object, so Endpoints left
// behind by a Service deleted while the controller was down are removed
// (leader-election Endpoints excepted).
package endpoints
