package rbac

import (
	"reflect"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
)

// TestCovers pins the escalation check's coverage: wildcards,
// subresources, resourceNames and URL prefixes.
func TestCovers(t *testing.T) {
	for _, tc := range []struct {
		name           string
		owner, servant []rbacv1.PolicyRule
		missing        []rbacv1.PolicyRule
	}{
		{"star covers all", fullRules(), []rbacv1.PolicyRule{rule(s("get", "list"), s("", "apps"), s("pods", "deployments/scale")), {Verbs: s("get"), NonResourceURLs: s("/x")}}, nil},
		{"verb missing", []rbacv1.PolicyRule{rule(s("get"), s(""), s("pods"))}, []rbacv1.PolicyRule{rule(s("get", "list"), s(""), s("pods"))},
			[]rbacv1.PolicyRule{rule(s("list"), s(""), s("pods"))}},
		{"*/sub covers res/sub", []rbacv1.PolicyRule{rule(s("get"), s(""), s("*/log"))}, []rbacv1.PolicyRule{rule(s("get"), s(""), s("pods/log"))}, nil},
		{"res does not cover res/sub", []rbacv1.PolicyRule{rule(s("get"), s(""), s("pods"))}, []rbacv1.PolicyRule{rule(s("get"), s(""), s("pods/log"))},
			[]rbacv1.PolicyRule{rule(s("get"), s(""), s("pods/log"))}},
		{"names covered by no names", []rbacv1.PolicyRule{rule(s("get"), s(""), s("pods"))},
			[]rbacv1.PolicyRule{{Verbs: s("get"), APIGroups: s(""), Resources: s("pods"), ResourceNames: s("a")}}, nil},
		{"no names not covered by names", []rbacv1.PolicyRule{{Verbs: s("get"), APIGroups: s(""), Resources: s("pods"), ResourceNames: s("a")}},
			[]rbacv1.PolicyRule{rule(s("get"), s(""), s("pods"))}, []rbacv1.PolicyRule{rule(s("get"), s(""), s("pods"))}},
		{"other name", []rbacv1.PolicyRule{{Verbs: s("get"), APIGroups: s(""), Resources: s("pods"), ResourceNames: s("a")}},
			[]rbacv1.PolicyRule{{Verbs: s("get"), APIGroups: s(""), Resources: s("pods"), ResourceNames: s("a", "b")}},
			[]rbacv1.PolicyRule{{Verbs: s("get"), APIGroups: s(""), Resources: s("pods"), ResourceNames: s("b")}}},
		{"url prefix", []rbacv1.PolicyRule{{Verbs: s("get"), NonResourceURLs: s("/logs/*")}},
			[]rbacv1.PolicyRule{{Verbs: s("get"), NonResourceURLs: s("/logs/a", "/logs/*", "/logs")}},
			[]rbacv1.PolicyRule{{Verbs: s("get"), NonResourceURLs: s("/logs")}}},
	} {
		ok, missing := Covers(tc.owner, tc.servant)
		if ok != (len(tc.missing) == 0) || !reflect.DeepEqual(missing, tc.missing) {
			t.Errorf("%s: Covers = %v, %+v; want missing %+v", tc.name, ok, missing, tc.missing)
		}
	}
}

func fullRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{rule(s("*"), s("*"), s("*")), {Verbs: s("*"), NonResourceURLs: s("*")}}
}

func TestCompactString(t *testing.T) {
	got := []string{}
	for _, r := range Compact([]rbacv1.PolicyRule{
		rule(s("get"), s(""), s("pods")), rule(s("list"), s(""), s("pods")),
		{Verbs: s("get"), APIGroups: s("apps"), Resources: s("deployments"), ResourceNames: s("a")},
		{Verbs: s("get"), NonResourceURLs: s("/x")},
	}) {
		got = append(got, CompactString(r))
	}
	want := []string{`{APIGroups:[""], Resources:["pods"], Verbs:["get" "list"]}`,
		`{APIGroups:["apps"], Resources:["deployments"], ResourceNames:["a"], Verbs:["get"]}`,
		`{NonResourceURLs:["/x"], Verbs:["get"]}`}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
}
