package rbacpolicy_test

import (
	"reflect"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/rbacpolicy"
)

// TestDefault: the recorded policy holds what kube-apiserver v1.37.2
// creates, every object labelled and auto-updated, the aggregated roles
// without rules.
func TestDefault(t *testing.T) {
	p := rbacpolicy.Default()
	if len(p.ClusterRoles) != 73 || len(p.ClusterRoleBindings) != 54 || len(p.Roles) != 7 || len(p.RoleBindings) != 7 {
		t.Fatalf("%d clusterroles, %d clusterrolebindings, %d roles, %d rolebindings",
			len(p.ClusterRoles), len(p.ClusterRoleBindings), len(p.Roles), len(p.RoleBindings))
	}
	var metas []metav1.ObjectMeta
	aggregated := map[string]bool{}
	for _, r := range p.ClusterRoles {
		metas = append(metas, r.ObjectMeta)
		if r.AggregationRule != nil {
			aggregated[r.Name] = true
			if len(r.Rules) != 0 {
				t.Errorf("aggregated role %s has rules of its own", r.Name)
			}
		} else if len(r.Rules) == 0 {
			t.Errorf("role %s has no rules", r.Name)
		}
	}
	if !reflect.DeepEqual(aggregated, map[string]bool{"admin": true, "edit": true, "view": true}) {
		t.Errorf("aggregated roles %v", aggregated)
	}
	for _, b := range p.ClusterRoleBindings {
		metas = append(metas, b.ObjectMeta)
	}
	for _, r := range p.Roles {
		metas = append(metas, r.ObjectMeta)
		if r.Namespace != "kube-system" && r.Namespace != "kube-public" {
			t.Errorf("role %s in namespace %q", r.Name, r.Namespace)
		}
	}
	for _, b := range p.RoleBindings {
		metas = append(metas, b.ObjectMeta)
	}
	for _, m := range metas {
		if m.Labels[rbacpolicy.BootstrappingLabel] != rbacpolicy.BootstrappingValue || m.Annotations[rbacpolicy.AutoUpdateAnnotation] != "true" {
			t.Errorf("%s/%s: labels %v annotations %v", m.Namespace, m.Name, m.Labels, m.Annotations)
		}
		if m.UID != "" || m.ResourceVersion != "" || !m.CreationTimestamp.IsZero() || m.ManagedFields != nil {
			t.Errorf("%s/%s keeps server-set metadata", m.Namespace, m.Name)
		}
	}
	// A new copy on each call.
	p.ClusterRoles[0].Name = "changed"
	if rbacpolicy.Default().ClusterRoles[0].Name == "changed" {
		t.Error("Default shares its data")
	}
}

func rule(verbs, groups, resources []string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{Verbs: verbs, APIGroups: groups, Resources: resources}
}

func TestUncovered(t *testing.T) {
	s := func(v ...string) []string { return v }
	cases := []struct {
		name       string
		have, want []rbacv1.PolicyRule
		uncovered  []rbacv1.PolicyRule
	}{
		{"covered exactly", []rbacv1.PolicyRule{rule(s("get", "list"), s(""), s("pods"))}, []rbacv1.PolicyRule{rule(s("get"), s(""), s("pods"))}, nil},
		{"broken down", []rbacv1.PolicyRule{rule(s("get"), s(""), s("pods"))}, []rbacv1.PolicyRule{rule(s("get", "list"), s(""), s("pods", "services"))},
			[]rbacv1.PolicyRule{rule(s("list"), s(""), s("pods")), rule(s("get"), s(""), s("services")), rule(s("list"), s(""), s("services"))}},
		{"wildcards", []rbacv1.PolicyRule{rule(s("*"), s("*"), s("*"))}, []rbacv1.PolicyRule{rule(s("get"), s("apps"), s("deployments/scale"))}, nil},
		{"subresource wildcard", []rbacv1.PolicyRule{rule(s("get"), s(""), s("*/status"))}, []rbacv1.PolicyRule{rule(s("get"), s(""), s("pods/status", "pods"))},
			[]rbacv1.PolicyRule{rule(s("get"), s(""), s("pods"))}},
		{"resource names", []rbacv1.PolicyRule{{Verbs: s("get"), APIGroups: s(""), Resources: s("configmaps"), ResourceNames: s("a")}},
			[]rbacv1.PolicyRule{{Verbs: s("get"), APIGroups: s(""), Resources: s("configmaps"), ResourceNames: s("a", "b")}, rule(s("get"), s(""), s("configmaps"))},
			[]rbacv1.PolicyRule{{Verbs: s("get"), APIGroups: s(""), Resources: s("configmaps"), ResourceNames: s("b")}, rule(s("get"), s(""), s("configmaps"))}},
		{"non-resource URLs", []rbacv1.PolicyRule{{Verbs: s("get"), NonResourceURLs: s("/api/*", "/healthz")}},
			[]rbacv1.PolicyRule{{Verbs: s("get", "post"), NonResourceURLs: s("/api/v1", "/healthz", "/livez")}},
			[]rbacv1.PolicyRule{{Verbs: s("post"), NonResourceURLs: s("/api/v1")}, {Verbs: s("post"), NonResourceURLs: s("/healthz")},
				{Verbs: s("get"), NonResourceURLs: s("/livez")}, {Verbs: s("post"), NonResourceURLs: s("/livez")}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := rbacpolicy.Uncovered(c.have, c.want); !reflect.DeepEqual(got, c.uncovered) {
				t.Errorf("uncovered\n got %+v\nwant %+v", got, c.uncovered)
			}
		})
	}
}
