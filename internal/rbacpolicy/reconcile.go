package rbacpolicy

import (
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The functions of this file bring a stored default object toward its
// default definition at every start of the API server, as kube-apiserver's
// rbac/bootstrap-roles post-start hook does (union mode: nothing the
// stored object has is taken away). A stored object annotated
// rbac.authorization.kubernetes.io/autoupdate: "false" is left alone.

// Protected reports whether reconciliation leaves m's object alone.
func Protected(m *metav1.ObjectMeta) bool {
	return m.Annotations[AutoUpdateAnnotation] == "false"
}

// ReconcileClusterRole adds to stored, in place, the labels and
// annotations of want it lacks (its own values win), the parts of want's
// rules that its rules do not grant (broken down, see Uncovered), and the
// cluster role selectors of want's aggregation rule it lacks; an
// aggregation rule want does not have is removed. The rules an
// aggregation wrote stay: want, aggregated, has none to add.
func ReconcileClusterRole(stored, want *rbacv1.ClusterRole) {
	if Protected(&stored.ObjectMeta) {
		return
	}
	mergeMeta(&stored.ObjectMeta, &want.ObjectMeta)
	stored.Rules = append(stored.Rules, Uncovered(stored.Rules, want.Rules)...)
	if want.AggregationRule == nil {
		stored.AggregationRule = nil
		return
	}
	missing := missingSelectors(stored.AggregationRule, want.AggregationRule)
	if len(missing) == 0 {
		return
	}
	if stored.AggregationRule == nil {
		stored.AggregationRule = &rbacv1.AggregationRule{}
	}
	stored.AggregationRule.ClusterRoleSelectors = append(stored.AggregationRule.ClusterRoleSelectors, missing...)
}

// ReconcileRole adds to stored, in place, what want has and it lacks:
// labels, annotations and the parts of rules (as ReconcileClusterRole).
func ReconcileRole(stored, want *rbacv1.Role) {
	if Protected(&stored.ObjectMeta) {
		return
	}
	mergeMeta(&stored.ObjectMeta, &want.ObjectMeta)
	stored.Rules = append(stored.Rules, Uncovered(stored.Rules, want.Rules)...)
}

// ReconcileClusterRoleBinding adds to stored, in place, the labels,
// annotations and subjects of want it lacks. It reports recreate when the
// role references differ: a roleRef cannot change, so the stored binding
// is to be deleted and want created in its place.
func ReconcileClusterRoleBinding(stored, want *rbacv1.ClusterRoleBinding) (recreate bool) {
	if Protected(&stored.ObjectMeta) {
		return false
	}
	if stored.RoleRef != want.RoleRef {
		return true
	}
	mergeMeta(&stored.ObjectMeta, &want.ObjectMeta)
	stored.Subjects = addSubjects(stored.Subjects, want.Subjects)
	return false
}

// ReconcileRoleBinding is ReconcileClusterRoleBinding for a RoleBinding.
func ReconcileRoleBinding(stored, want *rbacv1.RoleBinding) (recreate bool) {
	if Protected(&stored.ObjectMeta) {
		return false
	}
	if stored.RoleRef != want.RoleRef {
		return true
	}
	mergeMeta(&stored.ObjectMeta, &want.ObjectMeta)
	stored.Subjects = addSubjects(stored.Subjects, want.Subjects)
	return false
}

// mergeMeta adds want's labels and annotations to stored's; stored's
// values win.
func mergeMeta(stored, want *metav1.ObjectMeta) {
	stored.Labels = merged(want.Labels, stored.Labels)
	stored.Annotations = merged(want.Annotations, stored.Annotations)
}

// merged is the union of base and over, over's values winning; nil when
// both are.
func merged(base, over map[string]string) map[string]string {
	if base == nil && over == nil {
		return nil
	}
	out := make(map[string]string, len(base)+len(over))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		out[k] = v
	}
	return out
}

// missingSelectors returns want's selectors that stored does not have.
func missingSelectors(stored, want *rbacv1.AggregationRule) []metav1.LabelSelector {
	var have []metav1.LabelSelector
	if stored != nil {
		have = stored.ClusterRoleSelectors
	}
	var out []metav1.LabelSelector
	for _, s := range want.ClusterRoleSelectors {
		if !slices.ContainsFunc(have, func(h metav1.LabelSelector) bool { return equality.Semantic.DeepEqual(h, s) }) {
			out = append(out, *s.DeepCopy())
		}
	}
	return out
}

// addSubjects appends to have the subjects of want it lacks, once each.
func addSubjects(have, want []rbacv1.Subject) []rbacv1.Subject {
	var missing []rbacv1.Subject
	for _, s := range want {
		if !slices.Contains(have, s) && !slices.Contains(missing, s) {
			missing = append(missing, s)
		}
	}
	return append(have, missing...)
}
