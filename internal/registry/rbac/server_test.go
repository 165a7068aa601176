package rbac_test

import (
	"net/http"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/registry/registrytest/apitest"
	"github.com/setpoint-dev/setpoint/internal/testserver"
)

const (
	base  = "/apis/rbac.authorization.k8s.io/v1"
	roles = base + "/namespaces/default/roles"
	rbs   = base + "/namespaces/default/rolebindings"
	crs   = base + "/clusterroles"
	crbs  = base + "/clusterrolebindings"

	sa1123   = `a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`
	labelKey = `name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`
)

// TestRefusals sends kube-apiserver v1.37.2's invalid RBAC objects and
// checks its answers, taken from it, and that nothing was stored.
func TestRefusals(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	apitest.Must(t, s, http.MethodPost, rbs, `{"metadata":{"name":"b-ok"},"roleRef":{"kind":"Role","name":"r"},"subjects":[{"kind":"User","name":"alice"}]}`, 201, nil)
	apitest.Must(t, s, http.MethodPost, crbs, `{"metadata":{"name":"crb"},"roleRef":{"kind":"ClusterRole","name":"view"}}`, 201, nil)
	invalid := func(kind, name, msg string, causes ...string) apitest.Refusal {
		return apitest.Refusal{Code: 422, Reason: metav1.StatusReasonInvalid, Message: kind + `.rbac.authorization.k8s.io "` + name + `" is invalid: ` + msg, Causes: causes}
	}
	apitest.RunRefusals(t, s, []apitest.Case{
		{Name: "role rules", Method: "POST", Path: roles, List: roles,
			Body: `{"metadata":{"name":"r1"},"rules":[{},{"verbs":["get"],"nonResourceURLs":["/x"],"apiGroups":[""],"resourceNames":["a"]},{"verbs":["get"],"resources":["pods"],"resourceNames":["a"]}]}`,
			Want: invalid("Role", "r1", `[rules[0].apiGroups: Required value: resource rules must supply at least one api group, rules[0].resources: Required value: resource rules must supply at least one resource, rules[1].nonResourceURLs: Invalid value: ["/x"]: namespaced rules cannot apply to non-resource URLs, rules[1].nonResourceURLs: Invalid value: ["/x"]: rules cannot apply to both regular resources and non-resource URLs, rules[2].apiGroups: Required value: resource rules must supply at least one api group, rules[0].verbs: Required value]`,
				"rules[0].apiGroups:FieldValueRequired", "rules[0].resources:FieldValueRequired", "rules[1].nonResourceURLs:FieldValueInvalid",
				"rules[1].nonResourceURLs:FieldValueInvalid", "rules[2].apiGroups:FieldValueRequired", "rules[0].verbs:FieldValueRequired")},
		{Name: "role name slash", Method: "POST", Path: roles, List: roles, Body: `{"metadata":{"name":"a/b"}}`,
			Want: invalid("Role", "a/b", `metadata.name: Invalid value: "a/b": may not contain '/'`, "metadata.name:FieldValueInvalid")},
		{Name: "role name percent", Method: "POST", Path: roles, List: roles, Body: `{"metadata":{"name":"A_b:c%d"}}`,
			Want: invalid("Role", "A_b:c%d", `metadata.name: Invalid value: "A_b:c%d": may not contain '%'`, "metadata.name:FieldValueInvalid")},
		{Name: "cluster role", Method: "POST", Path: crs, List: crs,
			Body: `{"metadata":{"name":"c1"},"rules":[{"verbs":["get"],"nonResourceURLs":["/x"]},{"verbs":[],"nonResourceURLs":["/y"],"resources":["pods"]}],"aggregationRule":{"clusterRoleSelectors":[{"matchLabels":{"a b":"c"}},{"matchExpressions":[{"key":"a","operator":"In"}]}]}}`,
			Want: invalid("ClusterRole", "c1", `[rules[1].nonResourceURLs: Invalid value: ["/y"]: rules cannot apply to both regular resources and non-resource URLs, aggregationRule.clusterRoleSelectors[0].matchLabels: Invalid value: "a b": `+labelKey+`, aggregationRule.clusterRoleSelectors[0]: Invalid value: null: invalid label selector., aggregationRule.clusterRoleSelectors[1].matchExpressions[0].values: Required value: must be specified when `+"`operator`"+` is 'In' or 'NotIn', aggregationRule.clusterRoleSelectors[1]: Invalid value: null: invalid label selector., rules[1].verbs: Required value]`,
				"rules[1].nonResourceURLs:FieldValueInvalid", "aggregationRule.clusterRoleSelectors[0].matchLabels:FieldValueInvalid",
				"aggregationRule.clusterRoleSelectors[0]:FieldValueInvalid", "aggregationRule.clusterRoleSelectors[1].matchExpressions[0].values:FieldValueRequired",
				"aggregationRule.clusterRoleSelectors[1]:FieldValueInvalid", "rules[1].verbs:FieldValueRequired")},
		{Name: "cluster role empty aggregation", Method: "POST", Path: crs, List: crs, Body: `{"metadata":{"name":"c2"},"aggregationRule":{}}`,
			Want: invalid("ClusterRole", "c2", `aggregationRule.clusterRoleSelectors: Required value: at least one clusterRoleSelector required if aggregationRule is non-nil`,
				"aggregationRule.clusterRoleSelectors:FieldValueRequired")},
		{Name: "binding without roleRef", Method: "POST", Path: rbs, List: rbs, Body: `{"metadata":{"name":"b1"},"roleRef":{}}`,
			Want: invalid("RoleBinding", "b1", `[roleRef.kind: Unsupported value: "": supported values: "Role", "ClusterRole", roleRef.name: Required value]`,
				"roleRef.kind:FieldValueNotSupported", "roleRef.name:FieldValueRequired")},
		{Name: "binding subjects", Method: "POST", Path: rbs, List: rbs,
			Body: `{"metadata":{"name":"b1"},"roleRef":{"apiGroup":"x","kind":"Foo","name":"a/b"},"subjects":[{},{"kind":"ServiceAccount","name":"Bad_SA","apiGroup":"rbac.authorization.k8s.io"},{"kind":"User","apiGroup":"x"},{"kind":"Group","name":"g","apiGroup":"x"},{"kind":"Foo","name":"f"},{"kind":"User","name":""}]}`,
			Want: invalid("RoleBinding", "b1", `[roleRef.apiGroup: Unsupported value: "x": supported values: "rbac.authorization.k8s.io", roleRef.kind: Unsupported value: "Foo": supported values: "Role", "ClusterRole", roleRef.name: Invalid value: "a/b": may not contain '/', subjects[0].kind: Unsupported value: "": supported values: "ServiceAccount", "User", "Group", subjects[1].name: Invalid value: "Bad_SA": `+sa1123+`, subjects[1].apiGroup: Unsupported value: "rbac.authorization.k8s.io": supported values: "", subjects[2].apiGroup: Unsupported value: "x": supported values: "rbac.authorization.k8s.io", subjects[3].apiGroup: Unsupported value: "x": supported values: "rbac.authorization.k8s.io", subjects[4].kind: Unsupported value: "Foo": supported values: "ServiceAccount", "User", "Group", subjects[0].name: Required value, subjects[2].name: Required value, subjects[5].name: Required value]`,
				"roleRef.apiGroup:FieldValueNotSupported", "roleRef.kind:FieldValueNotSupported", "roleRef.name:FieldValueInvalid",
				"subjects[0].kind:FieldValueNotSupported", "subjects[1].name:FieldValueInvalid", "subjects[1].apiGroup:FieldValueNotSupported",
				"subjects[2].apiGroup:FieldValueNotSupported", "subjects[3].apiGroup:FieldValueNotSupported", "subjects[4].kind:FieldValueNotSupported",
				"subjects[0].name:FieldValueRequired", "subjects[2].name:FieldValueRequired", "subjects[5].name:FieldValueRequired")},
		{Name: "cluster binding", Method: "POST", Path: crbs, List: crbs,
			Body: `{"metadata":{"name":"b1"},"roleRef":{"kind":"Role"},"subjects":[{"kind":"ServiceAccount"},{"kind":"Group","apiGroup":"x"}]}`,
			Want: invalid("ClusterRoleBinding", "b1", `[roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole", subjects[0].namespace: Required value, subjects[1].apiGroup: Unsupported value: "x": supported values: "rbac.authorization.k8s.io", subjects[0].name: Required value, subjects[1].name: Required value, roleRef.name: Required value]`,
				"roleRef.kind:FieldValueNotSupported", "subjects[0].namespace:FieldValueRequired", "subjects[1].apiGroup:FieldValueNotSupported",
				"subjects[0].name:FieldValueRequired", "subjects[1].name:FieldValueRequired", "roleRef.name:FieldValueRequired")},
		{Name: "roleRef changed", Method: "PUT", Path: rbs + "/b-ok", List: rbs,
			Body: `{"metadata":{"name":"b-ok"},"roleRef":{"kind":"ClusterRole","name":"view"},"subjects":[{"kind":"Foo"},{"kind":"User","name":"u","apiGroup":"x"}]}`,
			Want: invalid("RoleBinding", "b-ok", `[subjects[0].kind: Unsupported value: "Foo": supported values: "ServiceAccount", "User", "Group", subjects[1].apiGroup: Unsupported value: "x": supported values: "rbac.authorization.k8s.io", roleRef: Invalid value: {"APIGroup":"rbac.authorization.k8s.io","Kind":"ClusterRole","Name":"view"}: field is immutable, subjects[0].name: Required value]`,
				"subjects[0].kind:FieldValueNotSupported", "subjects[1].apiGroup:FieldValueNotSupported", "roleRef:FieldValueInvalid", "subjects[0].name:FieldValueRequired")},
		{Name: "roleRef emptied", Method: "PUT", Path: crbs + "/crb", List: crbs,
			Body: `{"metadata":{"name":"crb"},"roleRef":{"kind":"ClusterRole","name":""},"subjects":[{"kind":"User"},{"kind":"X","name":"a"}]}`,
			Want: invalid("ClusterRoleBinding", "crb", `[roleRef.name: Required value, subjects[1].kind: Unsupported value: "X": supported values: "ServiceAccount", "User", "Group", roleRef: Invalid value: {"APIGroup":"rbac.authorization.k8s.io","Kind":"ClusterRole","Name":""}: field is immutable, subjects[0].name: Required value]`,
				"roleRef.name:FieldValueRequired", "subjects[1].kind:FieldValueNotSupported", "roleRef:FieldValueInvalid", "subjects[0].name:FieldValueRequired")},
		{Name: "field selector", Method: "GET", Path: roles + "?fieldSelector=rules.verbs%3Dget", List: roles,
			Want: apitest.Refusal{Code: 400, Reason: metav1.StatusReasonBadRequest, Message: `"rules.verbs" is not a known field selector: only "metadata.name", "metadata.namespace"`}},
		{Name: "binding field selector", Method: "GET", Path: crbs + "?fieldSelector=roleRef.name%3Dview", List: crbs,
			Want: apitest.Refusal{Code: 400, Reason: metav1.StatusReasonBadRequest, Message: `"roleRef.name" is not a known field selector: only "metadata.name", "metadata.namespace"`}},
	})
}

// TestRoundTrip creates, reads, updates, lists by field and deletes
// objects of each kind: defaults applied, no generation, a PUT creates.
func TestRoundTrip(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	var rb rbacv1.RoleBinding
	apitest.Must(t, s, http.MethodPost, rbs, `{"metadata":{"name":"b"},"roleRef":{"kind":"Role","name":"r"},"subjects":[{"kind":"ServiceAccount","name":"sa"},{"kind":"User","name":"alice"},{"kind":"Group","name":"devs"}]}`, 201, &rb)
	want := []rbacv1.Subject{{Kind: "ServiceAccount", Name: "sa"}, {Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: "alice"}, {Kind: "Group", APIGroup: "rbac.authorization.k8s.io", Name: "devs"}}
	if rb.RoleRef.APIGroup != "rbac.authorization.k8s.io" || len(rb.Subjects) != 3 || rb.Subjects[0] != want[0] || rb.Subjects[1] != want[1] || rb.Subjects[2] != want[2] || rb.Generation != 0 {
		t.Fatalf("created %+v", rb)
	}
	apitest.Must(t, s, http.MethodPatch, rbs+"/b", `{"subjects":[{"kind":"User","name":"bob"}]}`, 200, &rb)
	if len(rb.Subjects) != 1 || rb.Subjects[0].APIGroup != "rbac.authorization.k8s.io" {
		t.Fatalf("patched subjects %+v", rb.Subjects)
	}
	var role rbacv1.Role
	apitest.Must(t, s, http.MethodPut, roles+"/put-created", `{"metadata":{"name":"put-created"},"rules":[{"verbs":["get"],"apiGroups":[""],"resources":["pods"]}]}`, 201, &role)
	apitest.Must(t, s, http.MethodPut, crbs+"/crb", `{"metadata":{"name":"crb"},"roleRef":{"kind":"ClusterRole","name":"view"},"subjects":[{"kind":"ServiceAccount","name":"sa","namespace":"ns"}]}`, 201, nil)
	apitest.Must(t, s, http.MethodPut, crs+"/Weird:Name_1", `{"metadata":{"name":"Weird:Name_1"},"rules":[{"verbs":["get"],"nonResourceURLs":["/healthz"]}]}`, 201, nil)
	var list rbacv1.ClusterRoleBindingList
	apitest.Must(t, s, http.MethodGet, crbs+"?fieldSelector=metadata.name%3Dcrb", "", 200, &list)
	if len(list.Items) != 1 {
		t.Fatalf("field-selected %d cluster role bindings", len(list.Items))
	}
	apitest.Must(t, s, http.MethodGet, crbs+"?fieldSelector=metadata.namespace%3Dx", "", 200, &list)
	if len(list.Items) != 0 {
		t.Fatalf("metadata.namespace=x selected %d cluster role bindings", len(list.Items))
	}
	apitest.Must(t, s, http.MethodDelete, roles+"/put-created", "", 200, nil)
	apitest.Must(t, s, http.MethodGet, roles+"/put-created", "", 404, nil)
}
