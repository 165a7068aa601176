package core

import "github.com/setpoint-dev/setpoint/internal/registry"

// Resources returns the descriptors of the core/v1 resources, new on each
// call, in the order discovery lists them.
func Resources() []*registry.Resource {
	return []*registry.Resource{
		namespacesResource(),
		podsResource(),
		nodesResource(),
		servicesResource(),
		configMapsResource(),
		secretsResource(),
		eventsResource(),
		serviceAccountsResource(),
		endpointsResource(),
		limitRangesResource(),
		resourceQuotasResource(),
		persistentVolumesResource(),
		persistentVolumeClaimsResource(),
		podTemplatesResource(),
		replicationControllersResource(),
		componentStatusesResource(),
		bindingsResource(),
	}
}
