package rbac

import (
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/printers"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

const group = "rbac.authorization.k8s.io"

func rolesResource() *registry.Resource {
	return &registry.Resource{
		Group: group, Version: "v1", Resource: "roles", Kind: "Role", ListKind: "RoleList", Singular: "role",
		Namespaced:   true,
		NoGeneration: true, // as kube-apiserver: no metadata.generation
		New:          func() runtime.Object { return &rbacv1.Role{} },
		NewList:      func() runtime.Object { return &rbacv1.RoleList{} },
		Strategy: strategy.CreateOnUpdate[*rbacv1.Role]{Typed: strategy.Typed[*rbacv1.Role]{
			ValidateNew:    validateRole,
			ValidateChange: validateRoleUpdate,
		}},
		Admit: admitRole,
		Attrs: strategy.Attrs[*rbacv1.Role](true, nil),
		Table: printers.For(group, "Role"),
	}
}

func validateRole(r *rbacv1.Role) field.ErrorList {
	c := validateRules(r.Rules, true, true)
	return append(append(metaErrors(&r.ObjectMeta, true), c.errs...), c.tail...)
}

func validateRoleUpdate(r, old *rbacv1.Role) field.ErrorList {
	c := validateRules(r.Rules, true, rulesChanged(r.Rules, old.Rules))
	errs := append(strategy.ValidateMetaUpdate(&r.ObjectMeta, &old.ObjectMeta), c.errs...)
	return append(errs, c.tail...)
}

func clusterRolesResource() *registry.Resource {
	return &registry.Resource{
		Group: group, Version: "v1", Resource: "clusterroles", Kind: "ClusterRole", ListKind: "ClusterRoleList",
		Singular:     "clusterrole",
		NoGeneration: true,
		New:          func() runtime.Object { return &rbacv1.ClusterRole{} },
		NewList:      func() runtime.Object { return &rbacv1.ClusterRoleList{} },
		Strategy: strategy.CreateOnUpdate[*rbacv1.ClusterRole]{Typed: strategy.Typed[*rbacv1.ClusterRole]{
			ValidateNew:    validateClusterRole,
			ValidateChange: validateClusterRoleUpdate,
		}},
		Admit: admitClusterRole,
		Attrs: strategy.Attrs[*rbacv1.ClusterRole](false, nil),
		Table: printers.For(group, "ClusterRole"),
	}
}

func validateClusterRole(r *rbacv1.ClusterRole) field.ErrorList {
	c := validateRules(r.Rules, false, true)
	errs := append(metaErrors(&r.ObjectMeta, false), c.errs...)
	errs = append(errs, validateAggregationRule(r.AggregationRule, false)...)
	return append(errs, c.tail...)
}

// validateClusterRoleUpdate tolerates label values in the aggregation
// rule that the stored role already had.
func validateClusterRoleUpdate(r, old *rbacv1.ClusterRole) field.ErrorList {
	c := validateRules(r.Rules, false, rulesChanged(r.Rules, old.Rules))
	errs := append(strategy.ValidateMetaUpdate(&r.ObjectMeta, &old.ObjectMeta), c.errs...)
	errs = append(errs, validateAggregationRule(r.AggregationRule, hasInvalidLabelValue(old.AggregationRule))...)
	return append(errs, c.tail...)
}
