package rbac

import (
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/setpoint-dev/setpoint/internal/authorizer"
)

func res(verb, group, resource, sub, ns, name string) authorizer.Attributes {
	return authorizer.Attributes{ResourceRequest: true, Verb: verb, APIGroup: group, Resource: resource,
		Subresource: sub, Namespace: ns, Name: name}
}

func nonRes(verb, path string) authorizer.Attributes {
	return authorizer.Attributes{Verb: verb, Path: path}
}

// TestRuleAllows pins Kubernetes' matching of one rule against one request.
func TestRuleAllows(t *testing.T) {
	podsGet := rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}}
	for _, tc := range []struct {
		name string
		rule rbacv1.PolicyRule
		a    authorizer.Attributes
		want bool
	}{
		{"exact", podsGet, res("get", "", "pods", "", "ns", "p"), true},
		{"other verb", podsGet, res("list", "", "pods", "", "ns", ""), false},
		{"other group", podsGet, res("get", "apps", "pods", "", "ns", "p"), false},
		{"other resource", podsGet, res("get", "", "secrets", "", "ns", "s"), false},
		{"subresource not granted by resource", podsGet, res("get", "", "pods", "log", "ns", "p"), false},
		{"verb *", rbacv1.PolicyRule{Verbs: []string{"*"}, APIGroups: []string{""}, Resources: []string{"pods"}}, res("deletecollection", "", "pods", "", "ns", ""), true},
		{"group *", rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{"*"}, Resources: []string{"deployments"}}, res("get", "apps", "deployments", "", "ns", "d"), true},
		{"resource * covers subresources", rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"*"}}, res("get", "", "pods", "log", "ns", "p"), true},
		{"res/sub", rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods/log"}}, res("get", "", "pods", "log", "ns", "p"), true},
		{"res/sub is not res", rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods/log"}}, res("get", "", "pods", "", "ns", "p"), false},
		{"*/sub", rbacv1.PolicyRule{Verbs: []string{"update"}, APIGroups: []string{"*"}, Resources: []string{"*/scale"}}, res("update", "apps", "deployments", "scale", "ns", "d"), true},
		{"*/sub other sub", rbacv1.PolicyRule{Verbs: []string{"update"}, APIGroups: []string{"*"}, Resources: []string{"*/scale"}}, res("update", "apps", "deployments", "status", "ns", "d"), false},
		{"*/sub no sub", rbacv1.PolicyRule{Verbs: []string{"update"}, APIGroups: []string{"*"}, Resources: []string{"*/scale"}}, res("update", "apps", "deployments", "", "ns", "d"), false},
		{"resourceNames match", rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}, ResourceNames: []string{"a", "b"}}, res("get", "", "pods", "", "ns", "b"), true},
		{"resourceNames other", rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}, ResourceNames: []string{"a"}}, res("get", "", "pods", "", "ns", "c"), false},
		{"resourceNames never match list", rbacv1.PolicyRule{Verbs: []string{"list"}, APIGroups: []string{""}, Resources: []string{"pods"}, ResourceNames: []string{"a"}}, res("list", "", "pods", "", "ns", ""), false},
		{"resourceNames never match create", rbacv1.PolicyRule{Verbs: []string{"create"}, APIGroups: []string{""}, Resources: []string{"pods"}, ResourceNames: []string{"a"}}, res("create", "", "pods", "", "ns", ""), false},
		{"resource rule never matches a path", podsGet, nonRes("get", "/pods"), false},
		{"url exact", rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz"}}, nonRes("get", "/healthz"), true},
		{"url exact other", rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz"}}, nonRes("get", "/healthz/ping"), false},
		{"url prefix", rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz/*"}}, nonRes("get", "/healthz/ping"), true},
		{"url prefix excludes its parent", rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz/*"}}, nonRes("get", "/healthz"), false},
		{"url *", rbacv1.PolicyRule{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}, nonRes("post", "/anything"), true},
		{"url verb", rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"*"}}, nonRes("post", "/x"), false},
		{"url rule never matches a resource", rbacv1.PolicyRule{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}, res("get", "", "pods", "", "ns", "p"), false},
	} {
		if got := RuleAllows(tc.a, &tc.rule); got != tc.want {
			t.Errorf("%s: RuleAllows(%+v, %+v) = %v, want %v", tc.name, tc.a, tc.rule, got, tc.want)
		}
	}
}
