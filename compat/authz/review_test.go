package authz

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/setpoint-dev/setpoint/compat/internal/difftest"
)

// reviewStatus is what a SelfSubjectAccessReview answers.
type reviewStatus struct {
	Allowed         bool   `json:"allowed"`
	Denied          bool   `json:"denied"`
	Reason          string `json:"reason"`
	EvaluationError string `json:"evaluationError"`
}

// review asks a SelfSubjectAccessReview about attrs (resourceAttributes,
// or nonResourceAttributes when attrs has "path").
func review(ctx context.Context, s *difftest.Side, header map[string]string, attrs map[string]any) (reviewStatus, error) {
	key := "resourceAttributes"
	if _, ok := attrs["path"]; ok {
		key = "nonResourceAttributes"
	}
	body, _ := json.Marshal(map[string]any{"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
		"spec": map[string]any{key: attrs}})
	resp, err := s.Do(ctx, difftest.Request{Method: "POST", Path: "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", Body: body, Header: header})
	if err != nil {
		return reviewStatus{}, err
	}
	var out struct {
		Status reviewStatus `json:"status"`
	}
	if resp.Code != 201 || json.Unmarshal(resp.Body, &out) != nil {
		return reviewStatus{}, fmt.Errorf("%s: SelfSubjectAccessReview %v: %d %s", s.Name, attrs, resp.Code, resp.Body)
	}
	return out.Status, nil
}

// resourceCases are the resources and subresources of the matrix.
var resourceCases = []struct{ group, resource, subresource string }{
	{"", "pods", ""}, {"", "pods", "log"}, {"", "pods", "status"}, {"", "pods", "exec"}, {"", "pods", "eviction"},
	{"", "configmaps", ""}, {"", "secrets", ""}, {"", "serviceaccounts", ""}, {"", "serviceaccounts", "token"},
	{"", "nodes", ""}, {"", "nodes", "status"}, {"", "namespaces", ""}, {"", "events", ""}, {"", "persistentvolumeclaims", ""},
	{"", "persistentvolumes", ""}, {"", "endpoints", ""}, {"", "services", ""}, {"", "resourcequotas", ""},
	{"apps", "deployments", ""}, {"apps", "deployments", "scale"}, {"apps", "statefulsets", ""}, {"batch", "jobs", ""},
	{"rbac.authorization.k8s.io", "roles", ""}, {"rbac.authorization.k8s.io", "rolebindings", ""},
	{"rbac.authorization.k8s.io", "clusterroles", ""}, {"coordination.k8s.io", "leases", ""},
	{"apiextensions.k8s.io", "customresourcedefinitions", ""}, {"storage.k8s.io", "csinodes", ""},
	{"certificates.k8s.io", "certificatesigningrequests", ""}, {"authentication.k8s.io", "tokenreviews", ""},
	{"example.com", "widgets", ""},
}

var verbs = []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection", "escalate", "bind", "impersonate"}

var paths = []string{"/api", "/apis", "/version", "/healthz", "/readyz", "/livez", "/metrics", "/openapi/v2", "/openapi/v3",
	"/.well-known/openid-configuration", "/openid/v1/jwks", "/logs/", "/debug/pprof/"}

// matrix lists every review of one identity.
func matrix() []map[string]any {
	var out []map[string]any
	for _, ns := range []string{nsA, nsB, ""} {
		for _, r := range resourceCases {
			for _, v := range verbs {
				out = append(out, map[string]any{"namespace": ns, "verb": v, "group": r.group, "resource": r.resource, "subresource": r.subresource})
			}
		}
		// names: resourceNames rules and the node's own objects
		out = append(out,
			map[string]any{"namespace": ns, "verb": "get", "resource": "secrets", "name": "creds"},
			map[string]any{"namespace": ns, "verb": "get", "resource": "secrets", "name": "other"},
			map[string]any{"namespace": ns, "verb": "get", "resource": "nodes", "name": "n1"},
			map[string]any{"namespace": ns, "verb": "update", "resource": "nodes", "subresource": "status", "name": "n1"},
			map[string]any{"namespace": ns, "verb": "get", "group": "coordination.k8s.io", "resource": "leases", "name": "n1"})
	}
	for _, p := range paths {
		for _, v := range []string{"get", "post", "put", "delete"} {
			out = append(out, map[string]any{"path": p, "verb": v})
		}
	}
	return out
}

// TestAccessReviews asks every identity's SelfSubjectAccessReviews on both
// sides: allowed, denied and the reason must agree.
func TestAccessReviews(t *testing.T) {
	ctx := context.Background()
	cases := matrix()
	for _, id := range env.identities {
		t.Run(id.name, func(t *testing.T) {
			type result struct {
				attrs   map[string]any
				ref, sp reviewStatus
				err     error
			}
			results := make([]result, len(cases))
			var wg sync.WaitGroup
			sem := make(chan struct{}, 8)
			for i, attrs := range cases {
				wg.Add(1)
				sem <- struct{}{}
				go func() {
					defer wg.Done()
					defer func() { <-sem }()
					r := result{attrs: attrs}
					if r.ref, r.err = review(ctx, id.ref, id.header, attrs); r.err == nil {
						r.sp, r.err = review(ctx, id.sp, id.header, attrs)
					}
					results[i] = r
				}()
			}
			wg.Wait()
			var diffs []string
			allowed := 0
			for _, r := range results {
				if r.err != nil {
					t.Fatal(r.err)
				}
				if r.ref.Allowed {
					allowed++
				}
				if !sameReview(r.ref, r.sp) {
					diffs = append(diffs, fmt.Sprintf("%s: reference %+v, setpoint %+v", describe(r.attrs), r.ref, r.sp))
				}
			}
			sort.Strings(diffs)
			t.Logf("%s: %d reviews, %d allowed on the reference, %d differences", id.name, len(cases), allowed, len(diffs))
			if len(diffs) > 0 {
				t.Errorf("%d of %d reviews differ:\n  %s", len(diffs), len(cases), strings.Join(firstOf(diffs, 40), "\n  "))
			}
		})
	}
}

// describe is a review's attributes in one line, as kubectl auth can-i
// would be asked.
func describe(attrs map[string]any) string {
	if p, ok := attrs["path"]; ok {
		return fmt.Sprintf("%s %s", attrs["verb"], p)
	}
	res := fmt.Sprint(attrs["resource"])
	if g, _ := attrs["group"].(string); g != "" {
		res += "." + g
	}
	if sub, _ := attrs["subresource"].(string); sub != "" {
		res += "/" + sub
	}
	if n, _ := attrs["name"].(string); n != "" {
		res += " " + n
	}
	ns, _ := attrs["namespace"].(string)
	if ns == "" {
		ns = "(all)"
	}
	return fmt.Sprintf("%s %s -n %s", attrs["verb"], res, ns)
}

// bindingNames are the binding and role of an RBAC reason.
var bindingNames = regexp.MustCompile(`(Binding|Role) "[^"]*"`)

// sameReview compares two answers. When several bindings allow a request,
// which one a reason names is the order kube-apiserver's informer lists
// them in (a map's), so an allowing reason is compared with its binding
// and role names masked: the kinds and the subject must still agree.
func sameReview(ref, sp reviewStatus) bool {
	if ref.Allowed && sp.Allowed {
		ref.Reason = bindingNames.ReplaceAllString(ref.Reason, `$1 "*"`)
		sp.Reason = bindingNames.ReplaceAllString(sp.Reason, `$1 "*"`)
	}
	return ref == sp
}
