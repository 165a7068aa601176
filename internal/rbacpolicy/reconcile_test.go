package rbacpolicy_test

import (
	"reflect"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/rbacpolicy"
)

var defaultMeta = metav1.ObjectMeta{Name: "r",
	Labels:      map[string]string{rbacpolicy.BootstrappingLabel: rbacpolicy.BootstrappingValue},
	Annotations: map[string]string{rbacpolicy.AutoUpdateAnnotation: "true"}}

func TestReconcileClusterRole(t *testing.T) {
	want := &rbacv1.ClusterRole{ObjectMeta: defaultMeta, Rules: []rbacv1.PolicyRule{rule([]string{"get", "list"}, []string{""}, []string{"pods"})}}
	stored := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "r", Labels: map[string]string{"mine": "x", rbacpolicy.BootstrappingLabel: "changed"}},
		Rules:      []rbacv1.PolicyRule{rule([]string{"get"}, []string{""}, []string{"pods"}), rule([]string{"delete"}, []string{""}, []string{"secrets"})},
	}
	rbacpolicy.ReconcileClusterRole(stored, want)
	wantRules := []rbacv1.PolicyRule{rule([]string{"get"}, []string{""}, []string{"pods"}), rule([]string{"delete"}, []string{""}, []string{"secrets"}),
		rule([]string{"list"}, []string{""}, []string{"pods"})}
	if !reflect.DeepEqual(stored.Rules, wantRules) {
		t.Errorf("rules %+v", stored.Rules)
	}
	if !reflect.DeepEqual(stored.Labels, map[string]string{"mine": "x", rbacpolicy.BootstrappingLabel: "changed"}) ||
		stored.Annotations[rbacpolicy.AutoUpdateAnnotation] != "true" {
		t.Errorf("labels %v annotations %v", stored.Labels, stored.Annotations)
	}

	// Protected: left alone.
	prot := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "r", Annotations: map[string]string{rbacpolicy.AutoUpdateAnnotation: "false"}}}
	rbacpolicy.ReconcileClusterRole(prot, want)
	if len(prot.Rules) != 0 || len(prot.Labels) != 0 {
		t.Errorf("protected role changed: %+v", prot)
	}
}

func TestReconcileAggregationRule(t *testing.T) {
	sel := func(k string) metav1.LabelSelector {
		return metav1.LabelSelector{MatchLabels: map[string]string{k: "true"}}
	}
	want := &rbacv1.ClusterRole{ObjectMeta: defaultMeta, AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{sel("a"), sel("b")}}}
	aggregated := []rbacv1.PolicyRule{rule([]string{"get"}, []string{""}, []string{"pods"})}
	stored := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "r"}, Rules: aggregated,
		AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{sel("mine"), sel("b")}}}
	rbacpolicy.ReconcileClusterRole(stored, want)
	if !reflect.DeepEqual(stored.AggregationRule.ClusterRoleSelectors, []metav1.LabelSelector{sel("mine"), sel("b"), sel("a")}) {
		t.Errorf("selectors %+v", stored.AggregationRule.ClusterRoleSelectors)
	}
	if !reflect.DeepEqual(stored.Rules, aggregated) {
		t.Errorf("aggregated rules changed: %+v", stored.Rules)
	}
	// A stored aggregation rule the default lacks is removed.
	plain := &rbacv1.ClusterRole{ObjectMeta: defaultMeta, Rules: aggregated}
	stored = &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "r"}, Rules: aggregated,
		AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{sel("x")}}}
	rbacpolicy.ReconcileClusterRole(stored, plain)
	if stored.AggregationRule != nil {
		t.Errorf("aggregation rule kept: %+v", stored.AggregationRule)
	}
}

func TestReconcileRole(t *testing.T) {
	want := &rbacv1.Role{ObjectMeta: defaultMeta, Rules: []rbacv1.PolicyRule{rule([]string{"get"}, []string{""}, []string{"configmaps"})}}
	stored := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "r"}}
	rbacpolicy.ReconcileRole(stored, want)
	if !reflect.DeepEqual(stored.Rules, want.Rules) || !reflect.DeepEqual(stored.Labels, defaultMeta.Labels) {
		t.Errorf("reconciled %+v", stored)
	}
}

func TestReconcileBindings(t *testing.T) {
	ref := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "r"}
	alice := rbacv1.Subject{Kind: "User", APIGroup: rbacv1.GroupName, Name: "alice"}
	nodes := rbacv1.Subject{Kind: "Group", APIGroup: rbacv1.GroupName, Name: "system:nodes"}
	want := &rbacv1.ClusterRoleBinding{ObjectMeta: defaultMeta, RoleRef: ref, Subjects: []rbacv1.Subject{nodes}}
	stored := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "r"}, RoleRef: ref, Subjects: []rbacv1.Subject{alice}}
	if rbacpolicy.ReconcileClusterRoleBinding(stored, want) {
		t.Fatal("recreate with the same roleRef")
	}
	if !reflect.DeepEqual(stored.Subjects, []rbacv1.Subject{alice, nodes}) {
		t.Errorf("subjects %+v", stored.Subjects)
	}
	if rbacpolicy.ReconcileClusterRoleBinding(stored, want) || len(stored.Subjects) != 2 {
		t.Errorf("second reconcile: %+v", stored.Subjects)
	}
	other := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "r"}, RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "other"}}
	if !rbacpolicy.ReconcileClusterRoleBinding(other, want) {
		t.Error("no recreate for a changed roleRef")
	}
	other.Annotations = map[string]string{rbacpolicy.AutoUpdateAnnotation: "false"}
	if rbacpolicy.ReconcileClusterRoleBinding(other, want) || other.Subjects != nil {
		t.Errorf("protected binding touched: %+v", other)
	}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "kube-system"}, RoleRef: ref}
	if rbacpolicy.ReconcileRoleBinding(rb, &rbacv1.RoleBinding{ObjectMeta: defaultMeta, RoleRef: ref, Subjects: []rbacv1.Subject{nodes, nodes}}) ||
		!reflect.DeepEqual(rb.Subjects, []rbacv1.Subject{nodes}) {
		t.Errorf("role binding %+v", rb)
	}
}
