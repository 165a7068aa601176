package batch

import "github.com/setpoint-dev/setpoint/internal/registry"

// Resources returns the descriptors of the batch/v1 resources, new on each
// call, in the order kube-apiserver lists them.
func Resources() []*registry.Resource {
	return []*registry.Resource{cronJobsResource(), jobsResource()}
}
