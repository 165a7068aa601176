package networking

import "github.com/setpoint-dev/setpoint/internal/registry"

// Resources returns the descriptors of the networking.k8s.io/v1
// resources, new on each call, in discovery order.
func Resources() []*registry.Resource {
	return []*registry.Resource{
		ingressClassesResource(), ingressesResource(), ipAddressesResource(), networkPoliciesResource(),
		serviceCIDRsResource(),
	}
}
