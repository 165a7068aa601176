package rbac

import (
	"context"
	"reflect"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/setpoint-dev/setpoint/internal/authorizer"
)

func role(ns, name string, rules ...rbacv1.PolicyRule) *rbacv1.Role {
	return &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Rules: rules}
}

func clusterRole(name string, rules ...rbacv1.PolicyRule) *rbacv1.ClusterRole {
	return &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}
}

func roleBinding(ns, name, kind, roleName string, subjects ...rbacv1.Subject) *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: kind, Name: roleName}, Subjects: subjects}
}

func clusterRoleBinding(name, roleName string, subjects ...rbacv1.Subject) *rbacv1.ClusterRoleBinding {
	return &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: roleName}, Subjects: subjects}
}

func user(name string) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: name}
}
func group(name string) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: name}
}
func serviceAccount(ns, name string) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}
}

func rule(verbs, groups, resources []string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{Verbs: verbs, APIGroups: groups, Resources: resources}
}

func s(v ...string) []string { return v }

// fed returns an authorizer fed objs (all four resources listed).
func fed(t testing.TB, objs ...runtime.Object) *Authorizer {
	t.Helper()
	a := New()
	by := map[string][]runtime.Object{}
	for _, o := range objs {
		var r string
		switch o.(type) {
		case *rbacv1.Role:
			r = Roles
		case *rbacv1.ClusterRole:
			r = ClusterRoles
		case *rbacv1.RoleBinding:
			r = RoleBindings
		case *rbacv1.ClusterRoleBinding:
			r = ClusterRoleBindings
		}
		by[r] = append(by[r], o)
	}
	for _, r := range Resources {
		if err := a.Replace(r, by[r]); err != nil {
			t.Fatal(err)
		}
	}
	return a
}

func TestAuthorize(t *testing.T) {
	ctx := context.Background()
	alice := authorizer.User{Name: "alice", Groups: []string{"devs", "system:authenticated"}}
	sa := authorizer.User{Name: "system:serviceaccount:team:builder", Groups: []string{"system:serviceaccounts", "system:authenticated"}}
	a := fed(t,
		clusterRole("pod-reader", rule(s("get", "list", "watch"), s(""), s("pods"))),
		clusterRole("node-reader", rule(s("get"), s(""), s("nodes"))),
		clusterRole("health", rbacv1.PolicyRule{Verbs: s("get"), NonResourceURLs: s("/healthz", "/logs/*")}),
		role("team", "deployer", rule(s("create", "update"), s("apps"), s("deployments"))),
		clusterRoleBinding("alice-nodes", "node-reader", user("alice")),
		clusterRoleBinding("devs-health", "health", group("devs")),
		roleBinding("team", "readers", "ClusterRole", "pod-reader", group("devs")),
		roleBinding("team", "deploy", "Role", "deployer", serviceAccount("", "builder")),
		roleBinding("other", "sa-elsewhere", "ClusterRole", "pod-reader", serviceAccount("team", "builder")),
		roleBinding("team", "dangling", "ClusterRole", "missing", user("bob")),
	)
	for _, tc := range []struct {
		name       string
		u          authorizer.User
		a          authorizer.Attributes
		want       authorizer.Decision
		wantReason string
	}{
		{"cluster binding to user", alice, res("get", "", "nodes", "", "", "n1"), authorizer.DecisionAllow,
			`RBAC: allowed by ClusterRoleBinding "alice-nodes" of ClusterRole "node-reader" to User "alice"`},
		{"cluster binding applies in namespaces", alice, res("get", "", "nodes", "", "team", "n1"), authorizer.DecisionAllow,
			`RBAC: allowed by ClusterRoleBinding "alice-nodes" of ClusterRole "node-reader" to User "alice"`},
		{"rolebinding to clusterrole grants in its namespace", alice, res("list", "", "pods", "", "team", ""), authorizer.DecisionAllow,
			`RBAC: allowed by RoleBinding "readers/team" of ClusterRole "pod-reader" to Group "devs"`},
		{"rolebinding to clusterrole not elsewhere", alice, res("list", "", "pods", "", "default", ""), authorizer.DecisionNoOpinion, ""},
		{"rolebinding to clusterrole not cluster-wide", alice, res("list", "", "pods", "", "", ""), authorizer.DecisionNoOpinion, ""},
		{"non-resource via group", alice, nonRes("get", "/logs/kube"), authorizer.DecisionAllow,
			`RBAC: allowed by ClusterRoleBinding "devs-health" of ClusterRole "health" to Group "devs"`},
		{"non-resource other verb", alice, nonRes("post", "/healthz"), authorizer.DecisionNoOpinion, ""},
		{"service account defaulted to binding namespace", sa, res("create", "apps", "deployments", "", "team", ""), authorizer.DecisionAllow,
			`RBAC: allowed by RoleBinding "deploy/team" of Role "deployer" to ServiceAccount "builder/team"`},
		{"service account bound in another namespace", sa, res("get", "", "pods", "", "other", "p"), authorizer.DecisionAllow,
			`RBAC: allowed by RoleBinding "sa-elsewhere/other" of ClusterRole "pod-reader" to ServiceAccount "builder/team"`},
		{"unbound user", authorizer.User{Name: "carol"}, res("get", "", "pods", "", "team", "p"), authorizer.DecisionNoOpinion, ""},
		{"missing role is an evaluation error", authorizer.User{Name: "bob"}, res("get", "", "pods", "", "team", "p"), authorizer.DecisionNoOpinion,
			`RBAC: clusterrole.rbac.authorization.k8s.io "missing" not found`},
		{"missing role does not matter elsewhere", authorizer.User{Name: "bob"}, res("get", "", "pods", "", "default", "p"), authorizer.DecisionNoOpinion, ""},
	} {
		tc.a.User = tc.u
		d, reason, err := a.Authorize(ctx, tc.a)
		if d != tc.want || reason != tc.wantReason || err != nil {
			t.Errorf("%s: Authorize = %v, %q, %v; want %v, %q", tc.name, d, reason, err, tc.want, tc.wantReason)
		}
	}
}

// TestChangesInvalidate checks that every kind of change reaches the
// cached decisions: a new binding, a changed role, a deleted binding.
func TestChangesInvalidate(t *testing.T) {
	ctx := context.Background()
	u := authorizer.User{Name: "alice"}
	get := res("get", "", "pods", "", "ns", "p")
	get.User = u
	a := fed(t, clusterRole("r", rule(s("list"), s(""), s("pods"))))
	check := func(step string, want authorizer.Decision) {
		t.Helper()
		if d, _, _ := a.Authorize(ctx, get); d != want {
			t.Fatalf("%s: decision %v, want %v", step, d, want)
		}
	}
	check("no binding", authorizer.DecisionNoOpinion)
	b := roleBinding("ns", "b", "ClusterRole", "r", user("alice"))
	if err := a.Set(b); err != nil {
		t.Fatal(err)
	}
	check("binding to a role without get", authorizer.DecisionNoOpinion)
	if err := a.Set(clusterRole("r", rule(s("get"), s(""), s("pods")))); err != nil {
		t.Fatal(err)
	}
	check("role gains get", authorizer.DecisionAllow)
	if err := a.Delete(b); err != nil {
		t.Fatal(err)
	}
	check("binding deleted", authorizer.DecisionNoOpinion)
}

func TestRulesFor(t *testing.T) {
	a := fed(t,
		clusterRole("view", rule(s("get"), s(""), s("pods"))),
		clusterRole("urls", rbacv1.PolicyRule{Verbs: s("get"), NonResourceURLs: s("/api", "/api/*")}),
		role("ns", "named", rbacv1.PolicyRule{Verbs: s("update"), APIGroups: s("apps"), Resources: s("deployments"), ResourceNames: s("web")}),
		clusterRoleBinding("urls", "urls", group("system:authenticated")),
		roleBinding("ns", "a-view", "ClusterRole", "view", user("alice")),
		roleBinding("ns", "b-named", "Role", "named", user("alice")),
		roleBinding("ns", "c-gone", "Role", "gone", user("alice")),
	)
	resRules, nonResRules, incomplete, err := a.RulesFor(context.Background(),
		authorizer.User{Name: "alice", Groups: s("system:authenticated")}, "ns")
	wantRes := []authorizer.ResourceRule{
		{Verbs: s("get"), APIGroups: s(""), Resources: s("pods")},
		{Verbs: s("update"), APIGroups: s("apps"), Resources: s("deployments"), ResourceNames: s("web")},
	}
	wantNonRes := []authorizer.NonResourceRule{{Verbs: s("get"), NonResourceURLs: s("/api", "/api/*")}}
	if !reflect.DeepEqual(resRules, wantRes) || !reflect.DeepEqual(nonResRules, wantNonRes) || incomplete {
		t.Errorf("RulesFor = %+v, %+v, %v", resRules, nonResRules, incomplete)
	}
	if err == nil || err.Error() != `role.rbac.authorization.k8s.io "gone" not found` {
		t.Errorf("RulesFor error = %v", err)
	}
}

// TestWaitsForSync checks that nothing is decided before the first lists.
func TestWaitsForSync(t *testing.T) {
	a := New()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := a.Authorize(ctx, res("get", "", "pods", "", "ns", "p")); err == nil {
		t.Fatal("Authorize before sync did not wait")
	}
}
