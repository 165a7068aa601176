package rbacpolicy

import (
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
)

// Uncovered returns the parts of want that no rule of have grants, as
// kube-apiserver's reconciliation computes them: every rule of want is
// broken down into rules of one verb and one API group and resource (and
// resource name) or one non-resource URL, and those no rule of have
// covers are returned, in order.
func Uncovered(have, want []rbacv1.PolicyRule) []rbacv1.PolicyRule {
	var out []rbacv1.PolicyRule
	for _, r := range want {
		for _, sub := range breakdown(r) {
			if !slices.ContainsFunc(have, func(h rbacv1.PolicyRule) bool { return covers(h, sub) }) {
				out = append(out, sub)
			}
		}
	}
	return out
}

// breakdown splits a rule into rules of at most one verb, API group,
// resource, resource name and non-resource URL.
func breakdown(r rbacv1.PolicyRule) []rbacv1.PolicyRule {
	var out []rbacv1.PolicyRule
	for _, g := range r.APIGroups {
		for _, res := range r.Resources {
			for _, v := range r.Verbs {
				if len(r.ResourceNames) == 0 {
					out = append(out, rbacv1.PolicyRule{APIGroups: []string{g}, Resources: []string{res}, Verbs: []string{v}})
					continue
				}
				for _, n := range r.ResourceNames {
					out = append(out, rbacv1.PolicyRule{APIGroups: []string{g}, Resources: []string{res}, Verbs: []string{v}, ResourceNames: []string{n}})
				}
			}
		}
	}
	for _, u := range r.NonResourceURLs {
		for _, v := range r.Verbs {
			out = append(out, rbacv1.PolicyRule{NonResourceURLs: []string{u}, Verbs: []string{v}})
		}
	}
	return out
}

// covers reports whether owner grants everything sub (a broken-down rule)
// does.
func covers(owner, sub rbacv1.PolicyRule) bool {
	verbs := slices.Contains(owner.Verbs, rbacv1.VerbAll) || containsAll(owner.Verbs, sub.Verbs)
	groups := slices.Contains(owner.APIGroups, rbacv1.APIGroupAll) || containsAll(owner.APIGroups, sub.APIGroups)
	names := len(owner.ResourceNames) == 0 || (len(sub.ResourceNames) > 0 && containsAll(owner.ResourceNames, sub.ResourceNames))
	return verbs && groups && resourcesCovered(owner.Resources, sub.Resources) && names &&
		urlsCovered(owner.NonResourceURLs, sub.NonResourceURLs)
}

func containsAll(set, items []string) bool {
	for _, s := range items {
		if !slices.Contains(set, s) {
			return false
		}
	}
	return true
}

// resourcesCovered: "*" covers every resource, "*/sub" every resource's
// subresource sub.
func resourcesCovered(owner, want []string) bool {
	if slices.Contains(owner, rbacv1.ResourceAll) {
		return true
	}
	for _, r := range want {
		if slices.Contains(owner, r) {
			continue
		}
		_, sub, ok := strings.Cut(r, "/")
		if !ok || !slices.Contains(owner, "*/"+sub) {
			return false
		}
	}
	return true
}

// urlsCovered: an owner URL ending in "*" covers every URL with its
// prefix.
func urlsCovered(owner, want []string) bool {
	for _, u := range want {
		if !slices.ContainsFunc(owner, func(o string) bool {
			return o == u || (strings.HasSuffix(o, "*") && strings.HasPrefix(u, strings.TrimRight(o, "*")))
		}) {
			return false
		}
	}
	return true
}
