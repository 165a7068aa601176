package validatingadmissionpolicy_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/internal/testwait"
)

func do(t testing.TB, s *testserver.Server, method, path, body string) (int, map[string]any, http.Header) {
	t.Helper()
	var r *strings.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	var code int
	var b []byte
	var h http.Header
	if r != nil {
		code, b, h = s.Do(t, method, path, "application/json", r)
	} else {
		code, b, h = s.Do(t, method, path, "", nil)
	}
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return code, m, h
}

func mustDo(t testing.TB, s *testserver.Server, method, path, body string) {
	t.Helper()
	if code, m, _ := do(t, s, method, path, body); code >= 300 {
		t.Fatalf("%s %s: %d %v", method, path, code, m)
	}
}

// policy installs a policy and its binding, and waits until the plugin
// sees them (the probe is refused, or warned about when warn is set).
func policy(t testing.TB, s *testserver.Server, pol, binding string) {
	t.Helper()
	mustDo(t, s, "POST", "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies", pol)
	mustDo(t, s, "POST", "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings", binding)
}

// eventually retries f until it returns nil or 10 s pass.
func eventually(t *testing.T, f func() error) {
	t.Helper()
	testwait.UntilEvery(t, 10*time.Second, 50*time.Millisecond, "condition", f)
}

// refused creates obj until it is refused with code and message, then
// checks the object was not stored. An attempt made before the policy took
// effect may store the object, and the policy may then refuse its deletion
// too: such an object, known by its uid, does not count as stored by the
// refused request.
func refused(t *testing.T, s *testserver.Server, method, path, getPath, obj string, code int, reason, message string) {
	t.Helper()
	var earlier any // the uid of an object an earlier attempt stored and could not delete
	eventually(t, func() error {
		c, m, _ := do(t, s, method, path, obj)
		if c != code || m["message"] != message || m["reason"] != reason {
			if c < 300 && method == "POST" {
				earlier = nil
				if dc, _, _ := do(t, s, "DELETE", getPath, ""); dc >= 300 {
					earlier = m["metadata"].(map[string]any)["uid"]
				}
			}
			return fmt.Errorf("%s %s: %d %v %v\nwant %d %s %q", method, path, c, m["reason"], m["message"], code, reason, message)
		}
		causes, _ := m["details"].(map[string]any)["causes"].([]any)
		if len(causes) != 1 || !strings.HasSuffix(message, causes[0].(map[string]any)["message"].(string)) {
			return fmt.Errorf("causes %v", causes)
		}
		return nil
	})
	if method == "POST" {
		c, m, _ := do(t, s, "GET", getPath, "")
		if c == http.StatusOK && earlier != nil && m["metadata"].(map[string]any)["uid"] == earlier {
			return
		}
		if c != http.StatusNotFound {
			t.Fatalf("refused object stored: GET %s = %d", getPath, c)
		}
	}
}

const cmPath = "/api/v1/namespaces/vap/configmaps"

func configMap(name, labels, data string) string {
	return fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q,"labels":{%s}},"data":{%s}}`, name, labels, data)
}

func setup(t *testing.T) *testserver.Server { return setupB(t) }

func setupB(t testing.TB) *testserver.Server {
	s := testserver.Start(t, testserver.Options{})
	mustDo(t, s, "POST", "/api/v1/namespaces", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"vap","labels":{"policies":"on"}}}`)
	mustDo(t, s, "POST", "/api/v1/namespaces", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"other"}}`)
	return s
}

const match = `"matchConstraints":{"namespaceSelector":{"matchLabels":{"policies":"on"}},"objectSelector":{"matchLabels":{"t":"%s"}},"resourceRules":[{"apiGroups":[""],"apiVersions":["v1"],"operations":["CREATE","UPDATE","DELETE"],"resources":["configmaps"]}]}`

func vap(name, test, spec string) string {
	return fmt.Sprintf(`{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingAdmissionPolicy","metadata":{"name":%q},"spec":{`+match+`,%s}}`, name, test, spec)
}

func binding(name, policy, spec string) string {
	if spec != "" {
		spec = "," + spec
	}
	return fmt.Sprintf(`{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingAdmissionPolicyBinding","metadata":{"name":%q},"spec":{"policyName":%q%s}}`, name, policy, spec)
}

func testDenyAndMessages(t *testing.T, s *testserver.Server) {
	policy(t, s, vap("deny", "deny", `"variables":[{"name":"n","expression":"object.metadata.name"}],
		"validations":[
			{"expression":"!has(object.data) || !('bad' in object.data)","message":"no bad key"},
			{"expression":"variables.n.size() < 10","messageExpression":"'name ' + variables.n + ' too long'","reason":"Forbidden"},
			{"expression":"!has(object.data) || !('x' in object.data)"}]`),
		binding("deny-b", "deny", `"validationActions":["Deny"]`))
	pre := `configmaps "%s" is forbidden: ValidatingAdmissionPolicy 'deny' with binding 'deny-b' denied request: `
	refused(t, s, "POST", cmPath, cmPath+"/a", configMap("a", `"t":"deny"`, `"bad":"1"`), 422, "Invalid", fmt.Sprintf(pre, "a")+"no bad key")
	refused(t, s, "POST", cmPath, cmPath+"/longername1", configMap("longername1", `"t":"deny"`, ``), 403, "Forbidden", fmt.Sprintf(pre, "longername1")+"name longername1 too long")
	refused(t, s, "POST", cmPath, cmPath+"/b", configMap("b", `"t":"deny"`, `"x":"1"`), 422, "Invalid", fmt.Sprintf(pre, "b")+"failed expression: !has(object.data) || !('x' in object.data)")
	// Not matched: another label, another namespace.
	mustDo(t, s, "POST", cmPath, configMap("c", `"t":"other"`, `"bad":"1"`))
	mustDo(t, s, "POST", "/api/v1/namespaces/other/configmaps", configMap("c", `"t":"deny"`, `"bad":"1"`))
	// Update to a bad value is refused and leaves the object as it was.
	mustDo(t, s, "POST", cmPath, configMap("good", `"t":"deny"`, `"ok":"1"`))
	refused(t, s, "PUT", cmPath+"/good", "", configMap("good", `"t":"deny"`, `"bad":"1"`), 422, "Invalid", fmt.Sprintf(pre, "good")+"no bad key")
	if _, m, _ := do(t, s, "GET", cmPath+"/good", ""); m["data"].(map[string]any)["ok"] != "1" {
		t.Fatalf("refused update stored: %v", m)
	}
}

func testDeleteUpdateAndOldObject(t *testing.T, s *testserver.Server) {
	policy(t, s, vap("keep", "keep", `"validations":[
			{"expression":"request.operation != 'DELETE' || oldObject.data.keep != 'yes'","message":"kept"},
			{"expression":"request.operation != 'UPDATE' || object.data.v >= oldObject.data.v","messageExpression":"'v went down from ' + oldObject.data.v"}]`),
		binding("keep-b", "keep", `"validationActions":["Deny"]`))
	mustDo(t, s, "POST", cmPath, configMap("k", `"t":"keep"`, `"keep":"yes","v":"5"`))
	refused(t, s, "DELETE", cmPath+"/k", "", "", 422, "Invalid", `configmaps "k" is forbidden: ValidatingAdmissionPolicy 'keep' with binding 'keep-b' denied request: kept`)
	refused(t, s, "PUT", cmPath+"/k", "", configMap("k", `"t":"keep"`, `"keep":"yes","v":"3"`), 422, "Invalid",
		`configmaps "k" is forbidden: ValidatingAdmissionPolicy 'keep' with binding 'keep-b' denied request: v went down from 5`)
	if c, m, _ := do(t, s, "GET", cmPath+"/k", ""); c != 200 || m["data"].(map[string]any)["v"] != "5" {
		t.Fatalf("after refusals: %d %v", c, m)
	}
	mustDo(t, s, "PUT", cmPath+"/k", configMap("k", `"t":"keep"`, `"keep":"no","v":"6"`))
	mustDo(t, s, "DELETE", cmPath+"/k", "")
}

func testWarnAndParams(t *testing.T, s *testserver.Server) {
	mustDo(t, s, "POST", cmPath, configMap("limits", `"role":"param"`, `"max":"2"`))
	policy(t, s, vap("params", "params", `"paramKind":{"apiVersion":"v1","kind":"ConfigMap"},
		"validations":[{"expression":"size(object.data) <= int(params.data.max)","messageExpression":"'at most ' + params.data.max + ' keys'"}]`),
		binding("params-b", "params", `"paramRef":{"name":"limits","parameterNotFoundAction":"Deny"},"validationActions":["Warn"]`))
	eventually(t, func() error {
		c, m, h := do(t, s, "POST", cmPath, configMap("w", `"t":"params"`, `"a":"1","b":"2","c":"3"`))
		want := "299 - \"Validation failed for ValidatingAdmissionPolicy 'params' with binding 'params-b': at most 2 keys\""
		if c != 201 || h.Get("Warning") != want {
			do(t, s, "DELETE", cmPath+"/w", "")
			return fmt.Errorf("warn: %d %v %q", c, m["message"], h.Get("Warning"))
		}
		return nil
	})
	// A binding whose param is missing, with parameterNotFoundAction Deny.
	mustDo(t, s, "POST", "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings",
		binding("params-missing", "params", `"paramRef":{"name":"nope","parameterNotFoundAction":"Deny"},"validationActions":["Deny"]`))
	refused(t, s, "POST", cmPath, cmPath+"/m", configMap("m", `"t":"params"`, `"a":"1"`), 422, "Invalid",
		`configmaps "m" is forbidden: ValidatingAdmissionPolicy 'params' with binding 'params-missing' denied request: failed to configure binding: no params found for policy binding with `+"`Deny`"+` parameterNotFoundAction`)
}

func testFailurePolicyAndMatchConditions(t *testing.T, s *testserver.Server) {
	policy(t, s, vap("fail", "fail", `"failurePolicy":"Fail",
		"matchConditions":[{"name":"not-skipped","expression":"!has(object.metadata.annotations) || !('skip' in object.metadata.annotations)"}],
		"validations":[{"expression":"object.data.missing == 'x'"}]`),
		binding("fail-b", "fail", `"validationActions":["Deny"]`))
	refused(t, s, "POST", cmPath, cmPath+"/f", configMap("f", `"t":"fail"`, `"a":"1"`), 422, "Invalid",
		`configmaps "f" is forbidden: ValidatingAdmissionPolicy 'fail' with binding 'fail-b' denied request: expression 'object.data.missing == 'x'' resulted in error: no such key: missing`)
	mustDo(t, s, "POST", cmPath, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"skipped","labels":{"t":"fail"},"annotations":{"skip":"1"}},"data":{"a":"1"}}`)

	policy(t, s, vap("ignore", "ignore", `"failurePolicy":"Ignore","validations":[{"expression":"object.data.missing == 'x'"}]`),
		binding("ignore-b", "ignore", `"validationActions":["Deny"]`))
	time.Sleep(200 * time.Millisecond)
	mustDo(t, s, "POST", cmPath, configMap("i", `"t":"ignore"`, `"a":"1"`))
}

func testAuthorizerLibrary(t *testing.T, s *testserver.Server) {
	policy(t, s, vap("authz", "authz", `"validations":[
		{"expression":"authorizer.group('').resource('secrets').namespace('vap').check('delete').allowed() == false","messageExpression":"'user ' + request.userInfo.username + ' may delete secrets'"}]`),
		binding("authz-b", "authz", `"validationActions":["Deny"]`))
	refused(t, s, "POST", cmPath, cmPath+"/z", configMap("z", `"t":"authz"`, ``), 422, "Invalid",
		`configmaps "z" is forbidden: ValidatingAdmissionPolicy 'authz' with binding 'authz-b' denied request: user setpoint-admin may delete secrets`)
}

// TestPolicies runs the cases on one server (each on its own label).
func TestPolicies(t *testing.T) {
	s := setup(t)
	for name, f := range map[string]func(*testing.T, *testserver.Server){
		"deny": testDenyAndMessages, "delete-update": testDeleteUpdateAndOldObject, "warn-params": testWarnAndParams,
		"failure-policy": testFailurePolicyAndMatchConditions, "authorizer": testAuthorizerLibrary,
		"concurrent": testConcurrent,
	} {
		t.Run(name, func(t *testing.T) { f(t, s) })
	}
}

// testConcurrent: writes evaluated at once share the compiled policy; each
// gets its own answer.
func testConcurrent(t *testing.T, s *testserver.Server) {
	policy(t, s, vap("conc", "conc", `"validations":[{"expression":"!('bad' in object.data)","message":"no"}]`),
		binding("conc-b", "conc", `"validationActions":["Deny"]`))
	refused(t, s, "POST", cmPath, cmPath+"/conc-probe", configMap("conc-probe", `"t":"conc"`, `"bad":"1"`), 422, "Invalid",
		`configmaps "conc-probe" is forbidden: ValidatingAdmissionPolicy 'conc' with binding 'conc-b' denied request: no`)
	var wg sync.WaitGroup
	codes := make([]int, 16)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			data := `"ok":"1"`
			if i%2 == 1 {
				data = `"bad":"1"`
			}
			c, _, _ := s.Do(t, "POST", cmPath, "application/json", strings.NewReader(configMap(fmt.Sprintf("conc-%d", i), `"t":"conc"`, data)))
			codes[i] = c
		}()
	}
	wg.Wait()
	for i, c := range codes {
		if want := []int{201, 422}[i%2]; c != want {
			t.Errorf("write %d: %d, want %d", i, c, want)
		}
	}
}
