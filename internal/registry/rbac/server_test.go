package rbac_test

import (
	"net/http"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/setpoint-dev/setpoint/internal/registry/reftest"
	"github.com/setpoint-dev/setpoint/internal/testserver"
)

const (
	base  = "/apis/rbac.authorization.k8s.io/v1"
	roles = base + "/namespaces/default/roles"
	rbs   = base + "/namespaces/default/rolebindings"
	crs   = base + "/clusterroles"
	crbs  = base + "/clusterrolebindings"
)

// TestRoundTrip creates, reads, updates, lists by field and deletes
// objects of each kind: defaults applied, no generation, a PUT creates.
func TestRoundTrip(t *testing.T) {
	s := reftest.Start(t, testserver.Options{})
	var rb rbacv1.RoleBinding
	s.Must(t, http.MethodPost, rbs, `{"metadata":{"name":"b"},"roleRef":{"kind":"Role","name":"r"},"subjects":[{"kind":"ServiceAccount","name":"sa"},{"kind":"User","name":"alice"},{"kind":"Group","name":"devs"}]}`, 201, &rb)
	want := []rbacv1.Subject{{Kind: "ServiceAccount", Name: "sa"}, {Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: "alice"}, {Kind: "Group", APIGroup: "rbac.authorization.k8s.io", Name: "devs"}}
	if rb.RoleRef.APIGroup != "rbac.authorization.k8s.io" || len(rb.Subjects) != 3 || rb.Subjects[0] != want[0] || rb.Subjects[1] != want[1] || rb.Subjects[2] != want[2] || rb.Generation != 0 {
		t.Fatalf("created %+v", rb)
	}
	s.Must(t, http.MethodPatch, rbs+"/b", `{"subjects":[{"kind":"User","name":"bob"}]}`, 200, &rb)
	if len(rb.Subjects) != 1 || rb.Subjects[0].APIGroup != "rbac.authorization.k8s.io" {
		t.Fatalf("patched subjects %+v", rb.Subjects)
	}
	var role rbacv1.Role
	s.Must(t, http.MethodPut, roles+"/put-created", `{"metadata":{"name":"put-created"},"rules":[{"verbs":["get"],"apiGroups":[""],"resources":["pods"]}]}`, 201, &role)
	s.Must(t, http.MethodPut, crbs+"/crb", `{"metadata":{"name":"crb"},"roleRef":{"kind":"ClusterRole","name":"view"},"subjects":[{"kind":"ServiceAccount","name":"sa","namespace":"ns"}]}`, 201, nil)
	s.Must(t, http.MethodPut, crs+"/Weird:Name_1", `{"metadata":{"name":"Weird:Name_1"},"rules":[{"verbs":["get"],"nonResourceURLs":["/healthz"]}]}`, 201, nil)
	var list rbacv1.ClusterRoleBindingList
	s.Must(t, http.MethodGet, crbs+"?fieldSelector=metadata.name%3Dcrb", "", 200, &list)
	if len(list.Items) != 1 {
		t.Fatalf("field-selected %d cluster role bindings", len(list.Items))
	}
	s.Must(t, http.MethodGet, crbs+"?fieldSelector=metadata.namespace%3Dx", "", 200, &list)
	if len(list.Items) != 0 {
		t.Fatalf("metadata.namespace=x selected %d cluster role bindings", len(list.Items))
	}
	s.Must(t, http.MethodDelete, roles+"/put-created", "", 200, nil)
	s.Must(t, http.MethodGet, roles+"/put-created", "", 404, nil)
}
