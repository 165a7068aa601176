package scheduling

import "github.com/setpoint-dev/setpoint/internal/registry"

// Resources returns the descriptors of the scheduling.k8s.io/v1
// resources, new on each call.
func Resources() []*registry.Resource {
	return []*registry.Resource{priorityClassesResource()}
}
