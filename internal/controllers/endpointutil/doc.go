// Package endpointutil holds what the endpoints and EndpointSlice
// controllers share, as Kubernetes' controllers share it: which pods a
// Service's endpoints include (ShouldPodBeInEndpoints), when an address
// carries the pod's hostname (ShouldSetHostname), how a Service port's
// targetPort resolves on a pod (FindPort), which pod IP serves a Service
// of an IP family (PodIPOfFamily), the last-change trigger time of a
// Service's endpoints (TriggerTimes) and which Services a pod event
// concerns (PodHandler).
//
// Everything here reads shared informer objects and never modifies them.
package endpointutil
