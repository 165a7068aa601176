package authentication

import "github.com/setpoint-dev/setpoint/internal/registry"

// Resources returns the descriptors of the authentication.k8s.io/v1
// resources, new on each call, in the order discovery lists them.
func Resources() []*registry.Resource {
	return []*registry.Resource{selfSubjectReviewsResource(), tokenReviewsResource()}
}
