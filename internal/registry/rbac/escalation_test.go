package rbac_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/internal/testwait"
)

const aliceUser = "system:serviceaccount:default:alice"

// escalationEnv is a server where the service account default/alice may
// write roles and bindings in default and cluster-wide, and holds "get
// pods" in default, nothing more.
func escalationEnv(t *testing.T) (admin, alice *testserver.Server) {
	t.Helper()
	s := testserver.Start(t, testserver.Options{})
	post(t, s, roles, `{"metadata":{"name":"writer"},"rules":[{"verbs":["create","update","patch","get"],"apiGroups":["rbac.authorization.k8s.io"],"resources":["roles","rolebindings"]},{"verbs":["get"],"apiGroups":[""],"resources":["pods"]}]}`)
	post(t, s, rbs, `{"metadata":{"name":"writer"},"roleRef":{"kind":"Role","name":"writer"},"subjects":[{"kind":"ServiceAccount","name":"alice"}]}`)
	post(t, s, crs, `{"metadata":{"name":"cluster-writer"},"rules":[{"verbs":["create"],"apiGroups":["rbac.authorization.k8s.io"],"resources":["clusterroles","clusterrolebindings"]}]}`)
	post(t, s, crbs, `{"metadata":{"name":"cluster-writer"},"roleRef":{"kind":"ClusterRole","name":"cluster-writer"},"subjects":[{"kind":"ServiceAccount","name":"alice","namespace":"default"}]}`)
	post(t, s, crs, `{"metadata":{"name":"big"},"rules":[{"verbs":["*"],"apiGroups":[""],"resources":["secrets"]}]}`)
	alice = s.As(s.ServiceAccountToken(t, "default", "alice"))
	waitFor(t, "alice's bindings", func() (bool, string) {
		code, b, _ := alice.Do(t, "GET", roles+"/writer", "", nil)
		return code == http.StatusOK, string(b)
	})
	return s, alice
}

func post(t *testing.T, s *testserver.Server, path, body string) {
	t.Helper()
	if code, b, _ := s.Do(t, "POST", path, "application/json", strings.NewReader(body)); code != http.StatusCreated {
		t.Fatalf("POST %s: %d %s", path, code, b)
	}
}

func waitFor(t *testing.T, what string, check func() (bool, string)) {
	t.Helper()
	testwait.UntilEvery(t, 10*time.Second, 20*time.Millisecond, what, testwait.Check(check))
}

// refused sends a write as alice and checks kube-apiserver's Status, then
// that the admin reads the object as before (absent, or unchanged).
func refused(t *testing.T, admin, alice *testserver.Server, method, path, objPath, body string, code int, reason, message string, details map[string]string) {
	t.Helper()
	_, before, _ := admin.Do(t, "GET", objPath, "", nil)
	c, b, _ := alice.Do(t, method, path, "application/json", strings.NewReader(body))
	var st struct {
		Code    int               `json:"code"`
		Reason  string            `json:"reason"`
		Message string            `json:"message"`
		Details map[string]string `json:"details"`
	}
	if err := json.Unmarshal(b, &st); err != nil || c != code || st.Code != code || st.Reason != reason || st.Message != message {
		t.Errorf("%s %s: %d %s\nwant %d %s %q", method, path, c, b, code, reason, message)
	}
	for k, v := range details {
		if st.Details[k] != v {
			t.Errorf("%s %s: details %v, want %v", method, path, st.Details, details)
			break
		}
	}
	if _, after, _ := admin.Do(t, "GET", objPath, "", nil); string(after) != string(before) {
		t.Errorf("%s %s changed the store:\n%s\nthen\n%s", method, path, before, after)
	}
}

const aliceGroups = `(groups=["system:serviceaccounts" "system:serviceaccounts:default" "system:authenticated"])`

func notHeld(resource, name string, rules ...string) string {
	return resource + `.rbac.authorization.k8s.io "` + name + `" is forbidden: user "` + aliceUser + `" ` + aliceGroups +
		" is attempting to grant RBAC permissions not currently held:\n" + strings.Join(rules, "\n")
}

// TestEscalationRefused checks every refusal of escalation prevention,
// worded as kube-apiserver v1.37 words them (recorded on the reference),
// and that nothing is stored.
func TestEscalationRefused(t *testing.T) {
	admin, alice := escalationEnv(t)
	// What alice holds she may grant.
	post(t, alice, roles, `{"metadata":{"name":"ok"},"rules":[{"verbs":["get"],"apiGroups":[""],"resources":["pods"]}]}`)
	refused(t, admin, alice, "POST", roles, roles+"/r1",
		`{"metadata":{"name":"r1"},"rules":[{"verbs":["get","list"],"apiGroups":[""],"resources":["pods","secrets"]},{"verbs":["get"],"apiGroups":["apps"],"resources":["deployments"],"resourceNames":["a"]}]}`,
		403, "Forbidden", notHeld("roles", "r1",
			`{APIGroups:[""], Resources:["pods"], Verbs:["list"]}`,
			`{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list"]}`,
			`{APIGroups:["apps"], Resources:["deployments"], ResourceNames:["a"], Verbs:["get"]}`),
		map[string]string{"name": "r1", "group": "rbac.authorization.k8s.io", "kind": "roles"})
	refused(t, admin, alice, "PUT", roles+"/ok", roles+"/ok",
		`{"metadata":{"name":"ok"},"rules":[{"verbs":["get","delete"],"apiGroups":[""],"resources":["pods"]}]}`,
		403, "Forbidden", notHeld("roles", "ok", `{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}`), nil)
	refused(t, admin, alice, "POST", crs, crs+"/urls",
		`{"metadata":{"name":"urls"},"rules":[{"verbs":["get"],"nonResourceURLs":["/foo/*"]}]}`,
		403, "Forbidden", notHeld("clusterroles", "urls", `{NonResourceURLs:["/foo/*"], Verbs:["get"]}`), nil)
	refused(t, admin, alice, "POST", crs, crs+"/agg",
		`{"metadata":{"name":"agg"},"aggregationRule":{"clusterRoleSelectors":[{"matchLabels":{"x":"y"}}]}}`,
		403, "Forbidden", `clusterroles.rbac.authorization.k8s.io "agg" is forbidden: must have cluster-admin privileges to use the aggregationRule`,
		map[string]string{"name": "agg", "kind": "clusterroles"})
	refused(t, admin, alice, "POST", rbs, rbs+"/b1",
		`{"metadata":{"name":"b1"},"roleRef":{"kind":"ClusterRole","name":"big"},"subjects":[{"kind":"ServiceAccount","name":"alice"}]}`,
		403, "Forbidden", notHeld("rolebindings", "b1", `{APIGroups:[""], Resources:["secrets"], Verbs:["*"]}`),
		map[string]string{"name": "b1", "kind": "rolebindings"})
	refused(t, admin, alice, "POST", crbs, crbs+"/b1",
		`{"metadata":{"name":"b1"},"roleRef":{"kind":"ClusterRole","name":"big"},"subjects":[{"kind":"ServiceAccount","name":"alice","namespace":"default"}]}`,
		403, "Forbidden", notHeld("clusterrolebindings", "b1", `{APIGroups:[""], Resources:["secrets"], Verbs:["*"]}`), nil)
	refused(t, admin, alice, "POST", rbs, rbs+"/b2",
		`{"metadata":{"name":"b2"},"roleRef":{"kind":"ClusterRole","name":"nonexistent"},"subjects":[{"kind":"ServiceAccount","name":"alice"}]}`,
		404, "NotFound", `rolebindings.rbac.authorization.k8s.io "nonexistent" not found`,
		map[string]string{"name": "nonexistent", "group": "rbac.authorization.k8s.io", "kind": "rolebindings"})
	refused(t, admin, alice, "POST", crbs, crbs+"/b2",
		`{"metadata":{"name":"b2"},"roleRef":{"kind":"ClusterRole","name":"nonexistent"},"subjects":[{"kind":"ServiceAccount","name":"alice","namespace":"default"}]}`,
		404, "NotFound", `clusterrolebindings.rbac.authorization.k8s.io "nonexistent" not found`,
		map[string]string{"name": "nonexistent", "kind": "clusterrolebindings"})

	// A binding of alice to a missing role adds the resolution errors.
	post(t, admin, rbs, `{"metadata":{"name":"dangling"},"roleRef":{"kind":"ClusterRole","name":"nonexistent"},"subjects":[{"kind":"ServiceAccount","name":"alice"}]}`)
	refused(t, admin, alice, "POST", roles, roles+"/r2",
		`{"metadata":{"name":"r2"},"rules":[{"verbs":["list"],"apiGroups":[""],"resources":["pods"]}]}`,
		403, "Forbidden", notHeld("roles", "r2", `{APIGroups:[""], Resources:["pods"], Verbs:["list"]}`)+
			`; resolution errors: [roles.rbac.authorization.k8s.io "nonexistent" not found]`, nil)
}

// TestEscalateAndBind checks that the escalate and bind verbs let a user
// grant what they do not hold, as far as they reach (bind by role name).
func TestEscalateAndBind(t *testing.T) {
	admin, alice := escalationEnv(t)
	post(t, admin, roles, `{"metadata":{"name":"delegate"},"rules":[{"verbs":["escalate"],"apiGroups":["rbac.authorization.k8s.io"],"resources":["roles"]},{"verbs":["bind"],"apiGroups":["rbac.authorization.k8s.io"],"resources":["clusterroles"],"resourceNames":["big"]}]}`)
	post(t, admin, rbs, `{"metadata":{"name":"delegate"},"roleRef":{"kind":"Role","name":"delegate"},"subjects":[{"kind":"ServiceAccount","name":"alice"}]}`)
	waitFor(t, "escalate lets alice write a role beyond her rules", func() (bool, string) {
		code, b, _ := alice.Do(t, "POST", roles, "application/json", strings.NewReader(`{"metadata":{"name":"wide"},"rules":[{"verbs":["*"],"apiGroups":["*"],"resources":["*"]}]}`))
		return code == http.StatusCreated, string(b)
	})
	post(t, alice, rbs, `{"metadata":{"name":"big"},"roleRef":{"kind":"ClusterRole","name":"big"},"subjects":[{"kind":"User","name":"carol"}]}`)
	// bind reaches big only, and only in default: not "wide" (a Role she
	// may not bind and whose rules she lacks).
	refused(t, admin, alice, "POST", rbs, rbs+"/wide",
		`{"metadata":{"name":"wide"},"roleRef":{"kind":"Role","name":"wide"},"subjects":[{"kind":"User","name":"carol"}]}`,
		403, "Forbidden", notHeld("rolebindings", "wide", `{APIGroups:["*"], Resources:["*"], Verbs:["*"]}`), nil)
	// escalate on roles is not escalate on clusterroles.
	refused(t, admin, alice, "POST", crs, crs+"/wide",
		`{"metadata":{"name":"wide"},"rules":[{"verbs":["get"],"apiGroups":[""],"resources":["nodes"]}]}`,
		403, "Forbidden", notHeld("clusterroles", "wide", `{APIGroups:[""], Resources:["nodes"], Verbs:["get"]}`), nil)
}
