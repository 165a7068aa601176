package builtin

import "github.com/setpoint-dev/setpoint/internal/registry"

// Resources returns the descriptors of the built-in resources, new on each
// call: core/v1 namespaces, pods, nodes, services, configmaps, secrets and
// events; apps/v1 deployments and replicasets; coordination.k8s.io/v1
// leases; apiextensions.k8s.io/v1 customresourcedefinitions. Groups come
// in the order Kubernetes lists them in discovery.
func Resources() []*registry.Resource {
	return []*registry.Resource{
		namespacesResource(),
		podsResource(),
		nodesResource(),
		servicesResource(),
		configMapsResource(),
		secretsResource(),
		eventsResource(),
		deploymentsResource(),
		replicaSetsResource(),
		leasesResource(),
		crdsResource(),
	}
}
