package rbac

import "github.com/setpoint-dev/setpoint/internal/registry"

// Resources returns the descriptors of the rbac.authorization.k8s.io/v1
// resources, new on each call, in the order discovery lists them, with
// kube-apiserver's default roles and bindings (bootstrap.go).
func Resources() []*registry.Resource {
	return withDefaultPolicy([]*registry.Resource{
		clusterRoleBindingsResource(),
		clusterRolesResource(),
		roleBindingsResource(),
		rolesResource(),
	})
}
