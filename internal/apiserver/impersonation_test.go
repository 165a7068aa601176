package apiserver_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"

	"github.com/setpoint-dev/setpoint/internal/apiserver"
	"github.com/setpoint-dev/setpoint/internal/authorizer"
	"github.com/setpoint-dev/setpoint/internal/testserver"
)

// grantAuthorizer allows system:masters everything, everyone every verb
// but the impersonation ones, and those only as its grants list ("user
// verb group/resource[/subresource] [namespace/]name", "*" matching any
// name); it records every impersonation question.
type grantAuthorizer struct {
	grants []string
	mu     sync.Mutex
	asked  []string
}

func (g *grantAuthorizer) Authorize(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	if slices.Contains(a.User.Groups, "system:masters") || !strings.HasPrefix(a.Verb, "impersonate") {
		return authorizer.DecisionAllow, "", nil
	}
	res := a.APIGroup + "/" + a.Resource
	if a.Subresource != "" {
		res += "/" + a.Subresource
	}
	name := a.Name
	if a.Namespace != "" {
		name = a.Namespace + "/" + name
	}
	if !a.ResourceRequest {
		res, name = "path", a.Path
	}
	q := a.User.Name + " " + a.Verb + " " + res + " " + name
	g.mu.Lock()
	g.asked = append(g.asked, q)
	g.mu.Unlock()
	for _, grant := range g.grants {
		if grant == q || (strings.HasSuffix(grant, " *") && strings.HasPrefix(q, strings.TrimSuffix(grant, "*"))) {
			return authorizer.DecisionAllow, "", nil
		}
	}
	return authorizer.DecisionNoOpinion, "", nil
}

func (g *grantAuthorizer) RulesFor(context.Context, authorizer.User, string) ([]authorizer.ResourceRule, []authorizer.NonResourceRule, bool, error) {
	return nil, nil, true, nil
}

const aliceToken = "alice-token-0123456789"

// startImpersonation runs a server whose token file knows alice and whose
// authorizer is g.
func startImpersonation(t *testing.T, g *grantAuthorizer) *testserver.Server {
	t.Helper()
	dir := t.TempDir()
	tokens := "admin-token-0123456789,setpoint-admin,setpoint-admin,\"system:masters,system:authenticated\"\n" +
		aliceToken + ",alice,uid-alice,\"devs\"\n"
	if err := os.WriteFile(filepath.Join(dir, "tokens.csv"), []byte(tokens), 0o600); err != nil {
		t.Fatal(err)
	}
	return testserver.Start(t, testserver.Options{DataDir: dir, Tune: func(c *apiserver.Config) { c.Authorizer = g }})
}

// as sends a request with alice's token and the headers ("Name: value").
func as(t *testing.T, s *testserver.Server, method, path, body string, headers ...string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, s.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+aliceToken)
	req.Header.Set("Content-Type", "application/json")
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ": ")
		req.Header.Add(k, v)
	}
	resp, err := s.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out json.RawMessage
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

const ssrBody = `{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}`

// whoami answers the user a SelfSubjectReview with the headers runs as.
func whoami(t *testing.T, s *testserver.Server, headers ...string) (authenticationv1.UserInfo, int, string) {
	t.Helper()
	code, body := as(t, s, http.MethodPost, "/apis/authentication.k8s.io/v1/selfsubjectreviews", ssrBody, headers...)
	var r struct {
		Message string
		Status  struct{ UserInfo authenticationv1.UserInfo }
	}
	_ = json.Unmarshal(body, &r)
	return r.Status.UserInfo, code, r.Message
}

// TestImpersonationRefusals replays requests recorded from kube-apiserver
// v1.37.2 (constrained impersonation on): a requestor with no grant, then
// one granted the legacy impersonate verb on users only, in the same
// order, since the mode that last succeeded is tried first and its
// refusal is the one reported.
func TestImpersonationRefusals(t *testing.T) {
	g := &grantAuthorizer{}
	s := startImpersonation(t, g)
	const pods = "/api/v1/namespaces/default/pods"
	for _, c := range []struct {
		headers []string
		code    int
		message string
	}{
		{[]string{"Impersonate-User: bob"}, 403, `pods is forbidden: User "alice" cannot impersonate-on:user-info:list resource "pods" in API group "" in the namespace "default"`},
		{[]string{"Impersonate-Group: devs"}, 400, `requested &user.DefaultInfo{Name:"", UID:"", Groups:[]string{"devs"}, Extra:map[string][]string(nil)} without impersonating a user name`},
		{[]string{"Impersonate-User: system:serviceaccount:ns1:sa1"}, 403, `pods is forbidden: User "alice" cannot impersonate-on:serviceaccount:list resource "pods" in API group "" in the namespace "default"`},
		{[]string{"Impersonate-Uid: 123"}, 400, `requested &user.DefaultInfo{Name:"", UID:"123", Groups:[]string(nil), Extra:map[string][]string(nil)} without impersonating a user name`},
		{[]string{"Impersonate-Extra-Scopes: a"}, 400, `requested &user.DefaultInfo{Name:"", UID:"", Groups:[]string(nil), Extra:map[string][]string{"scopes":[]string{"a"}}} without impersonating a user name`},
	} {
		code, body := as(t, s, http.MethodGet, pods, "", c.headers...)
		var st struct{ Message string }
		_ = json.Unmarshal(body, &st)
		if code != c.code || st.Message != c.message {
			t.Errorf("%v: %d %s\nwant %d %s", c.headers, code, st.Message, c.code, c.message)
		}
	}

	g.grants = []string{"alice impersonate /users *"}
	for _, c := range []struct {
		headers []string
		message string
	}{
		{[]string{"Impersonate-User: bob"}, ""},
		{[]string{"Impersonate-User: bob", "Impersonate-Group: devs"}, `groups "devs" is forbidden: User "alice" cannot impersonate resource "groups" in API group "" at the cluster scope`},
		{[]string{"Impersonate-User: bob", "Impersonate-Uid: 42"}, `uids.authentication.k8s.io "42" is forbidden: User "alice" cannot impersonate resource "uids" in API group "authentication.k8s.io" at the cluster scope`},
		{[]string{"Impersonate-User: system:serviceaccount:ns1:sa1"}, `serviceaccounts "sa1" is forbidden: User "alice" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "ns1"`},
		{[]string{"Impersonate-User: system:node:n1"}, ""},
		{[]string{"Impersonate-User: bob", "Impersonate-Extra-Foo: a"}, `userextras.authentication.k8s.io "a" is forbidden: User "alice" cannot impersonate resource "userextras/foo" in API group "authentication.k8s.io" at the cluster scope`},
		{[]string{"Impersonate-User: bob", "Impersonate-Group: system:masters"}, `groups "system:masters" is forbidden: User "alice" cannot impersonate resource "groups" in API group "" at the cluster scope`},
	} {
		_, code, msg := whoami(t, s, c.headers...)
		if (c.message == "" && code != 201) || (c.message != "" && (code != 403 || msg != c.message)) {
			t.Errorf("%v: %d %s\nwant %s", c.headers, code, msg, c.message)
		}
	}
}

// TestImpersonation checks who the request then runs as, in each mode,
// and that the checks asked are kube-apiserver's.
func TestImpersonation(t *testing.T) {
	g := &grantAuthorizer{grants: []string{
		"alice impersonate /users bob", "alice impersonate /users carol", "alice impersonate /users system:anonymous",
		"alice impersonate /groups *", "alice impersonate authentication.k8s.io/uids *",
		"alice impersonate authentication.k8s.io/userextras/scopes *", "alice impersonate /serviceaccounts ns1/sa1",
		"alice impersonate-on:arbitrary-node:create authentication.k8s.io/selfsubjectreviews ",
		"alice impersonate:arbitrary-node authentication.k8s.io/nodes n2",
	}}
	s := startImpersonation(t, g)
	for _, c := range []struct {
		headers []string
		want    authenticationv1.UserInfo
	}{
		{[]string{"Impersonate-User: bob"}, authenticationv1.UserInfo{Username: "bob", Groups: []string{"system:authenticated"}}},
		{[]string{"Impersonate-User: bob", "Impersonate-Group: devs", "Impersonate-Group: ops", "Impersonate-Uid: 42", "Impersonate-Extra-Scopes: view", "Impersonate-Extra-Scopes: edit"},
			authenticationv1.UserInfo{Username: "bob", UID: "42", Groups: []string{"devs", "ops", "system:authenticated"},
				Extra: map[string]authenticationv1.ExtraValue{"scopes": {"view", "edit"}}}},
		{[]string{"Impersonate-User: system:anonymous"}, authenticationv1.UserInfo{Username: "system:anonymous", Groups: []string{"system:unauthenticated"}}},
		{[]string{"Impersonate-User: carol", "Impersonate-Group: system:unauthenticated"}, authenticationv1.UserInfo{Username: "carol", Groups: []string{"system:unauthenticated"}}},
		{[]string{"Impersonate-User: system:serviceaccount:ns1:sa1"}, authenticationv1.UserInfo{Username: "system:serviceaccount:ns1:sa1",
			Groups: []string{"system:serviceaccounts", "system:serviceaccounts:ns1", "system:authenticated"}}},
		{[]string{"Impersonate-User: system:node:n2"}, authenticationv1.UserInfo{Username: "system:node:n2", Groups: []string{"system:nodes", "system:authenticated"}}},
	} {
		u, code, msg := whoami(t, s, c.headers...)
		got, _ := json.Marshal(u)
		want, _ := json.Marshal(c.want)
		if code != 201 || string(got) != string(want) {
			t.Errorf("%v: %d %s %s\nwant %s", c.headers, code, msg, got, want)
		}
	}
	// The node was impersonated in the arbitrary-node mode (its fixed
	// group system:nodes), after the legacy mode that last succeeded was
	// tried first and refused.
	g.mu.Lock()
	defer g.mu.Unlock()
	i := slices.Index(g.asked, "alice impersonate /users system:node:n2")
	j := slices.Index(g.asked, "alice impersonate:arbitrary-node authentication.k8s.io/nodes n2")
	if i < 0 || j < i {
		t.Errorf("checks asked: %q", g.asked)
	}
}
