package storage

import "github.com/setpoint-dev/setpoint/internal/registry"

// Group is the API group of the package's resources.
const Group = "storage.k8s.io"

// Resources returns the descriptors of the storage.k8s.io/v1 resources,
// new on each call, in the order discovery lists them.
func Resources() []*registry.Resource {
	return []*registry.Resource{
		csiDriversResource(),
		csiNodesResource(),
		csiStorageCapacitiesResource(),
		storageClassesResource(),
		volumeAttachmentsResource(),
		volumeAttributesClassesResource(),
	}
}
