package admissionregistration

import "github.com/setpoint-dev/setpoint/internal/registry"

// Group is the API group of the package's resources.
const Group = "admissionregistration.k8s.io"

// Resources returns the descriptors of the admissionregistration.k8s.io/v1
// resources, new on each call, in the order discovery lists them.
func Resources() []*registry.Resource {
	return []*registry.Resource{
		mutatingAdmissionPoliciesResource(),
		mutatingAdmissionPolicyBindingsResource(),
		mutatingWebhookConfigurationsResource(),
		validatingAdmissionPoliciesResource(),
		validatingAdmissionPolicyBindingsResource(),
		validatingWebhookConfigurationsResource(),
	}
}
