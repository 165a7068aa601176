package rbac

import (
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestRoleRules(t *testing.T) {
	r := lookup(t, "roles")
	newRole := func(rules ...rbacv1.PolicyRule) *rbacv1.Role {
		return &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "Weird:Name_1", Namespace: "ns"}, Rules: rules}
	}
	get := rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods", "secrets"}, ResourceNames: []string{"a"}}
	expectValid(t, create(r, newRole(get)))
	for name, c := range map[string]struct {
		role *rbacv1.Role
		want []string
	}{
		"empty rule": {newRole(rbacv1.PolicyRule{}), []string{"rules[0].apiGroups:FieldValueRequired", "rules[0].resources:FieldValueRequired", "rules[0].verbs:FieldValueRequired"}},
		"non-resource in a role": {newRole(rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/x"}, APIGroups: []string{""}}),
			[]string{"rules[0].nonResourceURLs:FieldValueInvalid", "rules[0].nonResourceURLs:FieldValueInvalid"}},
		"name with a slash": {&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "a/b", Namespace: "ns"}}, []string{"metadata.name:FieldValueInvalid"}},
		"name ..":           {&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "..", Namespace: "ns"}}, []string{"metadata.name:FieldValueInvalid"}},
	} {
		t.Run(name, func(t *testing.T) { expectErrors(t, create(r, c.role), c.want...) })
	}
	expectFields(t, r, newRole(), fields.Set{"metadata.name": "Weird:Name_1", "metadata.namespace": "ns"})
}

// TestDeclarativeOrder pins where kube-apiserver v1.37 puts the errors its
// declarative validation reports: after the others, and on update only
// for what changed.
func TestDeclarativeOrder(t *testing.T) {
	paths := func(errs field.ErrorList) []string {
		out := make([]string, len(errs))
		for i, e := range errs {
			out[i] = e.Field
		}
		return out
	}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "ns"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}}, {Verbs: []string{"get"}}}}
	got := paths(validateRole(role))
	want := []string{"rules[1].apiGroups", "rules[1].resources", "rules[0].verbs"}
	if !equal(got, want) {
		t.Errorf("role create: %v, want %v", got, want)
	}
	old := role.DeepCopy()
	old.ResourceVersion = "3"
	got = paths(validateRoleUpdate(role.DeepCopy(), old))
	want = []string{"rules[0].verbs", "rules[1].apiGroups", "rules[1].resources"} // unchanged: in place
	if !equal(got, want) {
		t.Errorf("role update, rules unchanged: %v, want %v", got, want)
	}

	b := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "b"},
		RoleRef:  rbacv1.RoleRef{APIGroup: group, Kind: "Role"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount"}, {Kind: "Group", APIGroup: "x"}}}
	got = paths(validateBinding(&b.ObjectMeta, nil, b.RoleRef, nil, b.Subjects, nil, false))
	want = []string{"roleRef.kind", "subjects[0].namespace", "subjects[1].apiGroup", "subjects[0].name", "subjects[1].name", "roleRef.name"}
	if !equal(got, want) {
		t.Errorf("binding create: %v, want %v", got, want)
	}
	oldRef := rbacv1.RoleRef{APIGroup: group, Kind: "ClusterRole", Name: "view"}
	ref := rbacv1.RoleRef{APIGroup: group, Kind: "ClusterRole"}
	subjects := []rbacv1.Subject{{Kind: "User", APIGroup: group}, {Kind: "X", Name: "a"}}
	oldMeta := b.ObjectMeta
	oldMeta.ResourceVersion = "4"
	got = paths(validateBinding(&b.ObjectMeta, &oldMeta, ref, &oldRef, subjects, nil, false))
	want = []string{"roleRef.name", "subjects[1].kind", "roleRef", "subjects[0].name"}
	if !equal(got, want) {
		t.Errorf("binding update: %v, want %v", got, want)
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestClusterRoleAggregation(t *testing.T) {
	r := lookup(t, "clusterroles")
	cr := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "agg"}, AggregationRule: &rbacv1.AggregationRule{
		ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"rbac.example.com/aggregate": "true"}}}}}
	expectValid(t, create(r, cr))
	expectErrors(t, create(r, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "e"}, AggregationRule: &rbacv1.AggregationRule{}}),
		"aggregationRule.clusterRoleSelectors:FieldValueRequired")
	bad := cr.DeepCopy()
	bad.AggregationRule.ClusterRoleSelectors[0].MatchExpressions = []metav1.LabelSelectorRequirement{
		{Key: "a", Operator: metav1.LabelSelectorOpIn, Values: []string{"bad value"}}}
	expectErrors(t, create(r, bad), "aggregationRule.clusterRoleSelectors[0].matchExpressions[0].values[0]:FieldValueInvalid",
		"aggregationRule.clusterRoleSelectors[0]:FieldValueInvalid")
	// An update tolerates the values a stored role already had (the
	// selector itself still cannot be built).
	old := bad.DeepCopy()
	old.ResourceVersion = "5"
	upd := old.DeepCopy()
	upd.Labels = map[string]string{"l": "v"}
	expectErrors(t, update(r, upd, old), "aggregationRule.clusterRoleSelectors[0]:FieldValueInvalid")
	expectFields(t, r, cr, fields.Set{"metadata.name": "agg"})
}

func TestBindingDefaults(t *testing.T) {
	r := lookup(t, "rolebindings")
	b := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: "ns"},
		RoleRef:    rbacv1.RoleRef{Kind: "Role", Name: "r"},
		Subjects:   []rbacv1.Subject{{Kind: "User", Name: "u"}, {Kind: "Group", Name: "g"}, {Kind: "ServiceAccount", Name: "sa"}, {Kind: "Other", Name: "o"}},
	}
	expectErrors(t, create(r, b), "subjects[3].kind:FieldValueNotSupported")
	if b.RoleRef.APIGroup != group {
		t.Errorf("roleRef.apiGroup = %q", b.RoleRef.APIGroup)
	}
	for i, want := range []string{group, group, "", ""} {
		if got := b.Subjects[i].APIGroup; got != want {
			t.Errorf("subjects[%d].apiGroup = %q, want %q", i, got, want)
		}
	}
	again := b.DeepCopy()
	r.Strategy.Default(again)
	if again.RoleRef != b.RoleRef || again.Subjects[0] != b.Subjects[0] {
		t.Error("defaults are not idempotent")
	}
}

func TestRoleRefImmutable(t *testing.T) {
	r := lookup(t, "clusterrolebindings")
	old := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "b", ResourceVersion: "2"},
		RoleRef: rbacv1.RoleRef{APIGroup: group, Kind: "ClusterRole", Name: "view"}}
	upd := old.DeepCopy()
	upd.Subjects = []rbacv1.Subject{{Kind: "User", Name: "alice"}}
	expectValid(t, update(r, upd, old))
	upd.RoleRef.Name = "edit"
	errs := update(r, upd, old)
	expectErrors(t, errs, "roleRef:FieldValueInvalid")
	if len(errs) == 1 && errs[0].Error() != `roleRef: Invalid value: {"APIGroup":"rbac.authorization.k8s.io","Kind":"ClusterRole","Name":"edit"}: field is immutable` {
		t.Errorf("message %q", errs[0].Error())
	}
}
