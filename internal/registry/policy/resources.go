package policy

import "github.com/setpoint-dev/setpoint/internal/registry"

// Resources returns the descriptors of the policy/v1 resources, new on
// each call.
func Resources() []*registry.Resource {
	return []*registry.Resource{podDisruptionBudgetsResource()}
}
