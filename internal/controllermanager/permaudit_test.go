package controllermanager_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/setpoint-dev/setpoint/internal/authorizer"
	"github.com/setpoint-dev/setpoint/internal/authorizer/node"
	"github.com/setpoint-dev/setpoint/rest"
)

// This file checks, on the client side, every request our components send
// against kube-apiserver v1.37's default authorization (Node, then RBAC
// with the default policy the server holds), so that a permission our
// controllers need beyond kube's roles for them is found even before the
// server enforces authorization.

// policy is the RBAC objects of the server, read once.
type policy struct {
	clusterRoles map[string]rbacv1.ClusterRole
	roles        map[string]rbacv1.Role // ns/name
	crbs         []rbacv1.ClusterRoleBinding
	rbs          []rbacv1.RoleBinding
}

func loadPolicy(t *testing.T, ctx context.Context, c *rest.Client) *policy {
	t.Helper()
	p := &policy{clusterRoles: map[string]rbacv1.ClusterRole{}, roles: map[string]rbacv1.Role{}}
	crs, err := rest.For[*rbacv1.ClusterRole, *rbacv1.ClusterRoleList](c, rbacv1.SchemeGroupVersion.WithResource("clusterroles"), false).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range crs.Items {
		p.clusterRoles[r.Name] = r
	}
	rs, err := rest.For[*rbacv1.Role, *rbacv1.RoleList](c, rbacv1.SchemeGroupVersion.WithResource("roles"), true).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs.Items {
		p.roles[r.Namespace+"/"+r.Name] = r
	}
	crbs, err := rest.For[*rbacv1.ClusterRoleBinding, *rbacv1.ClusterRoleBindingList](c, rbacv1.SchemeGroupVersion.WithResource("clusterrolebindings"), false).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.crbs = crbs.Items
	rbs, err := rest.For[*rbacv1.RoleBinding, *rbacv1.RoleBindingList](c, rbacv1.SchemeGroupVersion.WithResource("rolebindings"), true).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.rbs = rbs.Items
	if len(p.clusterRoles) < 50 {
		t.Fatalf("the server holds %d ClusterRoles: not kube's default policy", len(p.clusterRoles))
	}
	return p
}

func subjectMatches(s rbacv1.Subject, u authorizer.User) bool {
	switch s.Kind {
	case rbacv1.UserKind:
		return s.Name == u.Name
	case rbacv1.GroupKind:
		return slices.Contains(u.Groups, s.Name)
	case rbacv1.ServiceAccountKind:
		return u.Name == "system:serviceaccount:"+s.Namespace+":"+s.Name
	}
	return false
}

func has(list []string, v string) bool { return slices.Contains(list, v) || slices.Contains(list, "*") }

func ruleAllows(r rbacv1.PolicyRule, a authorizer.Attributes) bool {
	if !has(r.Verbs, a.Verb) {
		return false
	}
	if !a.ResourceRequest {
		for _, u := range r.NonResourceURLs {
			if u == a.Path || u == "*" || strings.HasSuffix(u, "*") && strings.HasPrefix(a.Path, strings.TrimSuffix(u, "*")) {
				return true
			}
		}
		return false
	}
	if !has(r.APIGroups, a.APIGroup) {
		return false
	}
	res := a.Resource
	if a.Subresource != "" {
		res += "/" + a.Subresource
	}
	ok := false
	for _, rr := range r.Resources {
		if rr == "*" || rr == res || a.Subresource != "" && (rr == "*/"+a.Subresource || rr == a.Resource+"/*") {
			ok = true
		}
	}
	if !ok {
		return false
	}
	return len(r.ResourceNames) == 0 || a.Name != "" && slices.Contains(r.ResourceNames, a.Name)
}

func (p *policy) allows(a authorizer.Attributes) bool {
	rulesOf := func(ref rbacv1.RoleRef, ns string) []rbacv1.PolicyRule {
		if ref.Kind == "ClusterRole" {
			return p.clusterRoles[ref.Name].Rules
		}
		return p.roles[ns+"/"+ref.Name].Rules
	}
	for _, b := range p.crbs {
		if slices.ContainsFunc(b.Subjects, func(s rbacv1.Subject) bool { return subjectMatches(s, a.User) }) {
			for _, r := range rulesOf(b.RoleRef, "") {
				if ruleAllows(r, a) {
					return true
				}
			}
		}
	}
	for _, b := range p.rbs {
		if b.Namespace != a.Namespace || !slices.ContainsFunc(b.Subjects, func(s rbacv1.Subject) bool { return subjectMatches(s, a.User) }) {
			continue
		}
		for _, r := range rulesOf(b.RoleRef, b.Namespace) {
			if ruleAllows(r, a) {
				return true
			}
		}
	}
	return false
}

// attributes reads a request as kube-apiserver's request info does.
func attributes(r *http.Request, u authorizer.User) authorizer.Attributes {
	a := authorizer.Attributes{User: u, Path: r.URL.Path}
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	var rest []string
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		a.APIVersion, rest = parts[1], parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		a.APIGroup, a.APIVersion, rest = parts[1], parts[2], parts[3:]
	}
	if len(rest) == 0 {
		a.Verb = strings.ToLower(r.Method)
		return a
	}
	a.ResourceRequest = true
	if rest[0] == "namespaces" && len(rest) >= 3 && rest[2] != "status" && rest[2] != "finalize" {
		a.Namespace, rest = rest[1], rest[2:]
	}
	a.Resource = rest[0]
	if len(rest) > 1 {
		a.Name = rest[1]
	}
	if len(rest) > 2 {
		a.Subresource = rest[2]
	}
	if a.Resource == "namespaces" && a.Name != "" {
		a.Namespace = a.Name
	}
	q := r.URL.Query()
	if s := q.Get("fieldSelector"); s != "" {
		if sel, err := fields.ParseSelector(s); err == nil {
			a.FieldSelector = sel.Requirements()
			if v, ok := sel.RequiresExactMatch("metadata.name"); ok && a.Name == "" {
				a.Name = v
			}
		}
	}
	switch r.Method {
	case http.MethodGet:
		switch {
		case len(rest) > 1:
			a.Verb = "get"
		case q.Get("watch") == "true" || q.Get("watch") == "1":
			a.Verb = "watch"
		default:
			a.Verb = "list"
		}
	case http.MethodPost:
		a.Verb = "create"
	case http.MethodPut:
		a.Verb = "update"
	case http.MethodPatch:
		a.Verb = "patch"
	case http.MethodDelete:
		a.Verb = "delete"
		if len(rest) == 1 {
			a.Verb = "deletecollection"
		}
	}
	return a
}

// auditor records the requests the default authorization would refuse.
type auditor struct {
	policy *policy
	node   *node.Authorizer
	mu     sync.Mutex
	denied map[string]bool
}

// wrap audits the requests of a client whose identity is user, or, for
// ServiceAccount clients, the subject of their bearer token.
func (au *auditor) wrap(user authorizer.User) func(http.RoundTripper) http.RoundTripper {
	return func(next http.RoundTripper) http.RoundTripper {
		return roundTripper(func(r *http.Request) (*http.Response, error) {
			u := user
			if sa := tokenSubject(r.Header.Get("Authorization")); sa != "" {
				ns, _, _ := strings.Cut(strings.TrimPrefix(sa, "system:serviceaccount:"), ":")
				u = authorizer.User{Name: sa, Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"}}
			}
			au.check(r, u)
			return next.RoundTrip(r)
		})
	}
}

// forbid records every request of a client that should send none.
func (au *auditor) forbid(who string) func(http.RoundTripper) http.RoundTripper {
	return func(next http.RoundTripper) http.RoundTripper {
		return roundTripper(func(r *http.Request) (*http.Response, error) {
			au.mu.Lock()
			au.denied[fmt.Sprintf("%s: %s %s (it should send nothing)", who, r.Method, r.URL.RequestURI())] = true
			au.mu.Unlock()
			return next.RoundTrip(r)
		})
	}
}

func (au *auditor) check(r *http.Request, u authorizer.User) {
	a := attributes(r, u)
	if d, _, _ := au.node.Authorize(r.Context(), a); d == authorizer.DecisionAllow {
		return
	}
	if au.policy.allows(a) {
		return
	}
	what := fmt.Sprintf("%s: %s %s", u.Name, a.Verb, a.Resource)
	if a.APIGroup != "" {
		what += "." + a.APIGroup
	}
	if a.Subresource != "" {
		what += "/" + a.Subresource
	}
	if !a.ResourceRequest {
		what = fmt.Sprintf("%s: %s %s", u.Name, a.Verb, a.Path)
	}
	if strings.HasPrefix(u.Name, "system:node:") {
		what += " (" + r.URL.RequestURI() + ")"
	}
	au.mu.Lock()
	au.denied[what] = true
	au.mu.Unlock()
}

func (au *auditor) refusals() []string {
	au.mu.Lock()
	defer au.mu.Unlock()
	var out []string
	for k := range au.denied {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// tokenSubject is the sub claim of a ServiceAccount JWT bearer token.
func tokenSubject(h string) string {
	tok, ok := strings.CutPrefix(h, "Bearer ")
	if !ok {
		return ""
	}
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return ""
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return ""
	}
	var claims struct {
		Sub string `json:"sub"`
	}
	if json.Unmarshal(b, &claims) != nil || !strings.HasPrefix(claims.Sub, "system:serviceaccount:") {
		return ""
	}
	return claims.Sub
}
