package printers

import (
	"fmt"
	"strings"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// rbacTable returns the table of a rbac.authorization.k8s.io/v1 kind:
// kube-apiserver's default columns for roles, its binding columns (the
// subjects by kind with -o wide) for bindings.
func rbacTable(kind string, now func() time.Time) registry.TableConvertor {
	switch kind {
	case "Role":
		return createdAtTable[*rbacv1.Role](now)
	case "ClusterRole":
		return createdAtTable[*rbacv1.ClusterRole](now)
	case "RoleBinding":
		return newTable(bindingColumns("roleBinding"), func(b *rbacv1.RoleBinding, now time.Time) []interface{} {
			return bindingCells(&b.ObjectMeta, b.RoleRef, b.Subjects, now)
		}, now)
	case "ClusterRoleBinding":
		return newTable(bindingColumns("clusterRoleBinding"), func(b *rbacv1.ClusterRoleBinding, now time.Time) []interface{} {
			return bindingCells(&b.ObjectMeta, b.RoleRef, b.Subjects, now)
		}, now)
	}
	return nil
}

func bindingColumns(what string) []metav1.TableColumnDefinition {
	return []metav1.TableColumnDefinition{
		nameColumn(0),
		column("Role", "string", "The role the binding grants, as Kind/name."),
		ageColumn,
		wide("Users", "string", "Users in the "+what),
		wide("Groups", "string", "Groups in the "+what),
		wide("ServiceAccounts", "string", "ServiceAccounts in the "+what),
	}
}

// bindingCells renders a binding as kubectl shows it: the role as
// Kind/name, and the subjects by kind, service accounts as namespace/name.
func bindingCells(m *metav1.ObjectMeta, ref rbacv1.RoleRef, subjects []rbacv1.Subject, now time.Time) []interface{} {
	var users, groups, sas []string
	for _, s := range subjects {
		switch s.Kind {
		case rbacv1.UserKind:
			users = append(users, s.Name)
		case rbacv1.GroupKind:
			groups = append(groups, s.Name)
		case rbacv1.ServiceAccountKind:
			sas = append(sas, s.Namespace+"/"+s.Name)
		}
	}
	return []interface{}{
		m.Name, fmt.Sprintf("%s/%s", ref.Kind, ref.Name), age(m.CreationTimestamp, now),
		strings.Join(users, ", "), strings.Join(groups, ", "), strings.Join(sas, ", "),
	}
}
