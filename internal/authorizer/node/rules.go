package node

import (
	"slices"

	"github.com/setpoint-dev/setpoint/internal/authorizer"
)

// rule is a policy rule on resources ("resource/subresource" for a
// subresource), as RBAC writes them; no resource names.
type rule struct {
	verbs, groups, resources []string
}

// nodeRules are the rules of kube's system:node ClusterRole (v1.37.2),
// which kube-apiserver evaluates inside its Node authorizer for every
// resource the graph does not subdivide (the ClusterRole itself is bound
// to nobody).
var nodeRules = []rule{
	{[]string{"create"}, []string{"authentication.k8s.io"}, []string{"tokenreviews"}},
	{[]string{"create"}, []string{"authorization.k8s.io"}, []string{"localsubjectaccessreviews", "subjectaccessreviews"}},
	{[]string{"get", "list", "watch"}, []string{""}, []string{"services"}},
	{[]string{"create", "get", "list", "watch"}, []string{""}, []string{"nodes"}},
	{[]string{"patch", "update"}, []string{""}, []string{"nodes/status"}},
	{[]string{"patch", "update"}, []string{""}, []string{"nodes"}},
	{[]string{"create", "patch", "update"}, []string{"", "events.k8s.io"}, []string{"events"}},
	{[]string{"get", "list", "watch"}, []string{""}, []string{"pods"}},
	{[]string{"create", "delete"}, []string{""}, []string{"pods"}},
	{[]string{"patch", "update"}, []string{""}, []string{"pods/status"}},
	{[]string{"create"}, []string{""}, []string{"pods/eviction"}},
	{[]string{"get", "list", "watch"}, []string{""}, []string{"configmaps", "secrets"}},
	{[]string{"get"}, []string{""}, []string{"persistentvolumeclaims", "persistentvolumes"}},
	{[]string{"get"}, []string{""}, []string{"endpoints"}},
	{[]string{"create", "get", "list", "watch"}, []string{"certificates.k8s.io"}, []string{"certificatesigningrequests"}},
	{[]string{"create", "delete", "get", "patch", "update"}, []string{"coordination.k8s.io"}, []string{"leases"}},
	{[]string{"get"}, []string{"storage.k8s.io"}, []string{"volumeattachments"}},
	{[]string{"create"}, []string{""}, []string{"serviceaccounts/token"}},
	{[]string{"get", "patch", "update"}, []string{""}, []string{"persistentvolumeclaims/status"}},
	{[]string{"get", "list", "watch"}, []string{"storage.k8s.io"}, []string{"csidrivers"}},
	{[]string{"create", "delete", "get", "patch", "update"}, []string{"storage.k8s.io"}, []string{"csinodes"}},
	{[]string{"get", "list", "watch"}, []string{"node.k8s.io"}, []string{"runtimeclasses"}},
	{[]string{"get"}, []string{"resource.k8s.io"}, []string{"resourceclaims"}},
	{[]string{"deletecollection"}, []string{"resource.k8s.io"}, []string{"resourceslices"}},
	{[]string{"get", "list", "watch"}, []string{"certificates.k8s.io"}, []string{"clustertrustbundles"}},
	{[]string{"get"}, []string{""}, []string{"serviceaccounts"}},
	{[]string{"create", "get", "list", "watch"}, []string{"certificates.k8s.io"}, []string{"podcertificaterequests"}},
}

// rulesAllow reports whether a resource request matches one of rules.
func rulesAllow(a authorizer.Attributes, rules []rule) bool {
	if !a.ResourceRequest {
		return false
	}
	res := a.Resource
	if a.Subresource != "" {
		res += "/" + a.Subresource
	}
	for _, r := range rules {
		if slices.Contains(r.verbs, a.Verb) && slices.Contains(r.groups, a.APIGroup) && slices.Contains(r.resources, res) {
			return true
		}
	}
	return false
}
