package authorization

import "github.com/setpoint-dev/setpoint/internal/registry"

// Resources returns the descriptors of the authorization.k8s.io/v1
// resources, new on each call, in the order discovery lists them.
func Resources() []*registry.Resource {
	return []*registry.Resource{
		localSubjectAccessReviewsResource(),
		selfSubjectAccessReviewsResource(),
		selfSubjectRulesReviewsResource(),
		subjectAccessReviewsResource(),
	}
}
