package rbacpolicy

import (
	_ "embed"
	"encoding/json"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
)

// BootstrappingLabel and BootstrappingValue mark every default object, as
// kube-apiserver labels them.
const (
	BootstrappingLabel = "kubernetes.io/bootstrapping"
	BootstrappingValue = "rbac-defaults"
)

// AutoUpdateAnnotation set to "false" on a stored default object keeps
// reconciliation off it (rbacv1.AutoUpdateAnnotationKey).
const AutoUpdateAnnotation = rbacv1.AutoUpdateAnnotationKey

// policyJSON is the default policy of kube-apiserver v1.37.2, recorded
// from the reference by compat/cmd/rbacpolicy.
//
//go:embed zz_generated_policy.json
var policyJSON []byte

// Policy is a set of default roles and bindings: the objects' names,
// namespaces, labels and annotations, rules, aggregation rules, role
// references and subjects, without server-set metadata. An aggregated
// ClusterRole has its aggregationRule and no rules.
type Policy struct {
	ClusterRoles        []rbacv1.ClusterRole        `json:"clusterRoles"`
	ClusterRoleBindings []rbacv1.ClusterRoleBinding `json:"clusterRoleBindings"`
	Roles               []rbacv1.Role               `json:"roles"`
	RoleBindings        []rbacv1.RoleBinding        `json:"roleBindings"`
}

// Default returns kube-apiserver's default policy, a new copy on each
// call (callers may change it). The data is fixed, so a failure to decode
// it is a programming error.
func Default() *Policy {
	var p Policy
	if err := json.Unmarshal(policyJSON, &p); err != nil {
		panic(fmt.Sprintf("rbacpolicy: zz_generated_policy.json: %v", err))
	}
	return &p
}
