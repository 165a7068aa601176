package rbac

import (
	"fmt"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Covers reports whether owner grants everything servant does, as
// Kubernetes' escalation check decides it: servant is broken down into
// rules of one group, resource, verb and resource name (or one URL and
// verb), and each must be granted whole by one owner rule ("*" verbs and
// groups, "*" and "*/sub" resources, resourceNames that include the
// name or are absent, URL prefixes ending in "*"). It returns the pieces
// no owner rule covers.
func Covers(owner, servant []rbacv1.PolicyRule) (bool, []rbacv1.PolicyRule) {
	var missing []rbacv1.PolicyRule
	for _, r := range servant {
		for _, piece := range breakdown(r) {
			if !slices.ContainsFunc(owner, func(o rbacv1.PolicyRule) bool { return ruleCovers(&o, &piece) }) {
				missing = append(missing, piece)
			}
		}
	}
	return len(missing) == 0, missing
}

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

// ruleCovers reports whether owner grants all of piece (one of each).
func ruleCovers(owner, piece *rbacv1.PolicyRule) bool {
	names := len(owner.ResourceNames) == 0 || (len(piece.ResourceNames) > 0 && containsAll(owner.ResourceNames, piece.ResourceNames))
	return (slices.Contains(owner.Verbs, rbacv1.VerbAll) || containsAll(owner.Verbs, piece.Verbs)) &&
		(slices.Contains(owner.APIGroups, rbacv1.APIGroupAll) || containsAll(owner.APIGroups, piece.APIGroups)) &&
		resourcesCover(owner.Resources, piece.Resources) &&
		urlsCover(owner.NonResourceURLs, piece.NonResourceURLs) && names
}

func containsAll(set, want []string) bool {
	for _, w := range want {
		if !slices.Contains(set, w) {
			return false
		}
	}
	return true
}

func resourcesCover(owner, want []string) bool {
	if slices.Contains(owner, rbacv1.ResourceAll) {
		return true
	}
	for _, w := range want {
		if slices.Contains(owner, w) {
			continue
		}
		_, sub, ok := strings.Cut(w, "/")
		if !ok || !slices.Contains(owner, "*/"+sub) {
			return false
		}
	}
	return true
}

func urlsCover(owner, want []string) bool {
	for _, w := range want {
		if !slices.ContainsFunc(owner, func(o string) bool {
			return o == w || (strings.HasSuffix(o, "*") && strings.HasPrefix(w, strings.TrimRight(o, "*")))
		}) {
			return false
		}
	}
	return true
}

// Compact merges the rules of one API group and one resource that have
// nothing else but verbs into one rule with all their verbs (in order),
// as Kubernetes compacts the missing rules of an escalation refusal; the
// others stay as they are.
func Compact(rules []rbacv1.PolicyRule) []rbacv1.PolicyRule {
	var out []rbacv1.PolicyRule
	simple := map[[2]string]int{} // group, resource -> index in out
	for _, r := range rules {
		if len(r.ResourceNames) > 0 || len(r.NonResourceURLs) > 0 || len(r.APIGroups) != 1 || len(r.Resources) != 1 {
			out = append(out, r)
			continue
		}
		k := [2]string{r.APIGroups[0], r.Resources[0]}
		if i, ok := simple[k]; ok {
			out[i].Verbs = append(out[i].Verbs, r.Verbs...)
			continue
		}
		simple[k] = len(out)
		out = append(out, rbacv1.PolicyRule{APIGroups: slices.Clone(r.APIGroups), Resources: slices.Clone(r.Resources), Verbs: slices.Clone(r.Verbs)})
	}
	return out
}

// CompactString words a rule as Kubernetes' escalation refusals do:
// {APIGroups:["apps"], Resources:["deployments"], ResourceNames:["a"],
// Verbs:["get"]}, omitting empty fields.
func CompactString(r rbacv1.PolicyRule) string {
	var parts []string
	for _, f := range []struct {
		name string
		v    []string
	}{{"APIGroups", r.APIGroups}, {"Resources", r.Resources}, {"NonResourceURLs", r.NonResourceURLs},
		{"ResourceNames", r.ResourceNames}, {"Verbs", r.Verbs}} {
		if len(f.v) > 0 {
			parts = append(parts, fmt.Sprintf("%s:%q", f.name, f.v))
		}
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// Static returns an authorizer fed objs (Roles, ClusterRoles,
// RoleBindings and ClusterRoleBindings) as the complete lists of all four
// resources: a resolver over a consistent read, for escalation checks.
func Static(objs []runtime.Object) (*Authorizer, error) {
	a := New()
	a.mu.Lock()
	for _, o := range objs {
		if err := a.objs.put(o, false); err != nil {
			a.mu.Unlock()
			return nil, err
		}
	}
	for _, r := range Resources {
		a.sync.replaced(r)
	}
	a.mu.Unlock()
	return a, nil
}
