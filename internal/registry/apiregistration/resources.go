package apiregistration

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// Group is the API group of the package's resource.
const Group = "apiregistration.k8s.io"

// Resources returns the descriptors of the apiregistration.k8s.io/v1
// resources, new on each call. served returns the group-versions the
// server serves besides this one, in discovery order; the local
// APIServices are made from them at start.
func Resources(served func() []schema.GroupVersion) []*registry.Resource {
	return []*registry.Resource{apiServicesResource(served)}
}
