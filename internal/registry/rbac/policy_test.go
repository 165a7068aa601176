package rbac_test

import (
	"encoding/json"
	"net/http"
	"os"
	"reflect"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/controlplane"
	"github.com/setpoint-dev/setpoint/internal/rbacpolicy"
	"github.com/setpoint-dev/setpoint/internal/registry/reftest"
	"github.com/setpoint-dev/setpoint/internal/testserver"
)

const defaultsSelector = "?labelSelector=kubernetes.io%2Fbootstrapping%3Drbac-defaults"

// stored is the default policy as a server holds it, server-set metadata
// stripped.
func stored(t *testing.T, s *reftest.Server) *rbacpolicy.Policy {
	t.Helper()
	var p rbacpolicy.Policy
	var crl rbacv1.ClusterRoleList
	s.Must(t, http.MethodGet, crs+defaultsSelector, "", 200, &crl)
	for _, r := range crl.Items {
		r.ObjectMeta = strip(r.ObjectMeta)
		if r.AggregationRule != nil {
			r.Rules = nil // filled by the aggregation controller, when it runs
		}
		p.ClusterRoles = append(p.ClusterRoles, r)
	}
	var crbl rbacv1.ClusterRoleBindingList
	s.Must(t, http.MethodGet, crbs+defaultsSelector, "", 200, &crbl)
	for _, b := range crbl.Items {
		b.ObjectMeta = strip(b.ObjectMeta)
		p.ClusterRoleBindings = append(p.ClusterRoleBindings, b)
	}
	var rl rbacv1.RoleList
	s.Must(t, http.MethodGet, base+"/roles"+defaultsSelector, "", 200, &rl)
	for _, r := range rl.Items {
		r.ObjectMeta = strip(r.ObjectMeta)
		p.Roles = append(p.Roles, r)
	}
	var rbl rbacv1.RoleBindingList
	s.Must(t, http.MethodGet, base+"/rolebindings"+defaultsSelector, "", 200, &rbl)
	for _, b := range rbl.Items {
		b.ObjectMeta = strip(b.ObjectMeta)
		p.RoleBindings = append(p.RoleBindings, b)
	}
	return &p
}

func strip(m metav1.ObjectMeta) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: m.Name, Namespace: m.Namespace, Labels: m.Labels, Annotations: m.Annotations}
}

// samePolicy compares two policies object by object (lists come sorted by
// namespace and name from both).
func samePolicy(t *testing.T, got, want *rbacpolicy.Policy) {
	t.Helper()
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if string(g) == string(w) {
		return
	}
	for i := range max(len(got.ClusterRoles), len(want.ClusterRoles)) {
		if i >= len(got.ClusterRoles) || i >= len(want.ClusterRoles) || !reflect.DeepEqual(got.ClusterRoles[i], want.ClusterRoles[i]) {
			t.Errorf("first differing clusterrole at %d (got %d, want %d)", i, len(got.ClusterRoles), len(want.ClusterRoles))
			break
		}
	}
	t.Fatalf("policies differ:\n got %.2000s\nwant %.2000s", g, w)
}

// TestDefaultPolicy: a new server holds kube-apiserver's default roles and
// bindings, object for object and rule for rule, and answers ready only
// with them.
func TestDefaultPolicy(t *testing.T) {
	s := reftest.Start(t, testserver.Options{})
	samePolicy(t, stored(t, s), rbacpolicy.Default())
}

// TestDefaultPolicyReconciled: at the next start a deleted default role or
// binding is back, a default role missing rules gets them back (broken
// down, the user's own rules and labels kept), a binding keeps its extra
// subjects and regains the default ones, a binding whose roleRef was
// changed is recreated, and objects annotated autoupdate=false keep the
// user's edit.
func TestDefaultPolicyReconciled(t *testing.T) {
	dir := t.TempDir()
	ts := testserver.Start(t, testserver.Options{Storage: controlplane.StorageBolt, DataDir: dir})
	s := reftest.Wrap(ts)
	s.Must(t, http.MethodDelete, crs+"/system:basic-user", "", 200, nil)
	s.Must(t, http.MethodDelete, crbs+"/system:basic-user", "", 200, nil)
	s.Must(t, http.MethodDelete, base+"/namespaces/kube-system/roles/system:controller:token-cleaner", "", 200, nil)
	// system:discovery loses a URL, gains a rule and a label of the user's.
	s.Must(t, http.MethodPatch, crs+"/system:discovery", `{"metadata":{"labels":{"mine":"yes"}},"rules":[
		{"verbs":["get"],"nonResourceURLs":["/api","/api/*"]},{"verbs":["get"],"apiGroups":[""],"resources":["nodes"]}]}`, 200, nil)
	// system:public-info-viewer is the user's own from now on.
	s.Must(t, http.MethodPatch, crs+"/system:public-info-viewer", `{"metadata":{"annotations":{"rbac.authorization.kubernetes.io/autoupdate":"false"}},
		"rules":[{"verbs":["get"],"nonResourceURLs":["/healthz"]}]}`, 200, nil)
	s.Must(t, http.MethodPatch, crbs+"/system:discovery", `{"subjects":[{"kind":"User","name":"alice"}]}`, 200, nil)
	s.Must(t, http.MethodDelete, crbs+"/system:monitoring", "", 200, nil)
	s.Must(t, http.MethodPost, crbs, `{"metadata":{"name":"system:monitoring"},"roleRef":{"kind":"ClusterRole","name":"view"},"subjects":[{"kind":"User","name":"bob"}]}`, 201, nil)
	s.Must(t, http.MethodPatch, crbs+"/system:kube-dns", `{"metadata":{"annotations":{"rbac.authorization.kubernetes.io/autoupdate":"false"}},"subjects":[]}`, 200, nil)
	var oldMonitoring rbacv1.ClusterRoleBinding
	s.Must(t, http.MethodGet, crbs+"/system:monitoring", "", 200, &oldMonitoring)
	ts.Stop(t)

	s = reftest.Wrap(testserver.Start(t, testserver.Options{Storage: controlplane.StorageBolt, DataDir: dir}))
	def := rbacpolicy.Default()
	want := map[string]any{}
	for _, r := range def.ClusterRoles {
		want["clusterrole "+r.Name] = r
	}
	for _, b := range def.ClusterRoleBindings {
		want["clusterrolebinding "+b.Name] = b
	}
	var basic rbacv1.ClusterRole
	s.Must(t, http.MethodGet, crs+"/system:basic-user", "", 200, &basic)
	if w := want["clusterrole system:basic-user"].(rbacv1.ClusterRole); !reflect.DeepEqual(basic.Rules, w.Rules) || !reflect.DeepEqual(basic.Labels, w.Labels) {
		t.Errorf("recreated system:basic-user: %+v", basic)
	}
	s.Must(t, http.MethodGet, crbs+"/system:basic-user", "", 200, nil)
	s.Must(t, http.MethodGet, base+"/namespaces/kube-system/roles/system:controller:token-cleaner", "", 200, nil)

	var disc rbacv1.ClusterRole
	s.Must(t, http.MethodGet, crs+"/system:discovery", "", 200, &disc)
	wantRules := []rbacv1.PolicyRule{
		{Verbs: []string{"get"}, NonResourceURLs: []string{"/api", "/api/*"}},
		{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"nodes"}},
	}
	for _, r := range want["clusterrole system:discovery"].(rbacv1.ClusterRole).Rules {
		for _, u := range r.NonResourceURLs {
			if u != "/api" && u != "/api/*" {
				wantRules = append(wantRules, rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{u}})
			}
		}
	}
	if !reflect.DeepEqual(disc.Rules, wantRules) || disc.Labels["mine"] != "yes" || disc.Labels[rbacpolicy.BootstrappingLabel] != rbacpolicy.BootstrappingValue {
		t.Errorf("reconciled system:discovery: labels %v rules\n got %+v\nwant %+v", disc.Labels, disc.Rules, wantRules)
	}
	var piv rbacv1.ClusterRole
	s.Must(t, http.MethodGet, crs+"/system:public-info-viewer", "", 200, &piv)
	if len(piv.Rules) != 1 || len(piv.Rules[0].NonResourceURLs) != 1 {
		t.Errorf("autoupdate=false role changed: %+v", piv.Rules)
	}

	var discb rbacv1.ClusterRoleBinding
	s.Must(t, http.MethodGet, crbs+"/system:discovery", "", 200, &discb)
	wantSubjects := append([]rbacv1.Subject{{Kind: "User", APIGroup: rbacv1.GroupName, Name: "alice"}},
		want["clusterrolebinding system:discovery"].(rbacv1.ClusterRoleBinding).Subjects...)
	if !reflect.DeepEqual(discb.Subjects, wantSubjects) {
		t.Errorf("system:discovery subjects %+v, want %+v", discb.Subjects, wantSubjects)
	}
	var mon rbacv1.ClusterRoleBinding
	s.Must(t, http.MethodGet, crbs+"/system:monitoring", "", 200, &mon)
	wmon := want["clusterrolebinding system:monitoring"].(rbacv1.ClusterRoleBinding)
	if mon.UID == oldMonitoring.UID || mon.RoleRef != wmon.RoleRef || !reflect.DeepEqual(mon.Subjects, wmon.Subjects) {
		t.Errorf("system:monitoring not recreated: %+v", mon)
	}
	var dns rbacv1.ClusterRoleBinding
	s.Must(t, http.MethodGet, crbs+"/system:kube-dns", "", 200, &dns)
	if len(dns.Subjects) != 0 {
		t.Errorf("autoupdate=false binding changed: %+v", dns.Subjects)
	}
}

// TestDefaultPolicyReference compares the default policy of a new setpoint
// server with the reference's (SETPOINT_REFERENCE_KUBECONFIG): both hold
// the same objects, rule for rule; the aggregated roles' aggregation rules
// are compared, their rules come from the controller manager.
func TestDefaultPolicyReference(t *testing.T) {
	kubeconfig := os.Getenv(reftest.Env)
	if kubeconfig == "" {
		t.Skip("set " + reftest.Env + " to compare with the reference")
	}
	ref := reftest.Reference(t, kubeconfig)
	s := reftest.Start(t, testserver.Options{})
	samePolicy(t, stored(t, s), stored(t, ref))
}
