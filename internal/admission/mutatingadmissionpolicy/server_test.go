package mutatingadmissionpolicy_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/internal/testwait"
)

func do(t *testing.T, s *testserver.Server, method, path, body string) (int, map[string]any) {
	t.Helper()
	var code int
	var b []byte
	if body != "" {
		code, b, _ = s.Do(t, method, path, "application/json", strings.NewReader(body))
	} else {
		code, b, _ = s.Do(t, method, path, "", nil)
	}
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return code, m
}

func mustDo(t *testing.T, s *testserver.Server, method, path, body string) map[string]any {
	t.Helper()
	code, m := do(t, s, method, path, body)
	if code >= 300 {
		t.Fatalf("%s %s: %d %v", method, path, code, m)
	}
	return m
}

func eventually(t *testing.T, f func() error) {
	t.Helper()
	testwait.UntilEvery(t, 10*time.Second, 50*time.Millisecond, "condition", f)
}

const cmPath = "/api/v1/namespaces/map/configmaps"

func install(t *testing.T, s *testserver.Server, name, label, spec string) {
	t.Helper()
	mustDo(t, s, "POST", "/apis/admissionregistration.k8s.io/v1/mutatingadmissionpolicies", fmt.Sprintf(`{"apiVersion":"admissionregistration.k8s.io/v1","kind":"MutatingAdmissionPolicy","metadata":{"name":%q},"spec":{
		"matchConstraints":{"objectSelector":{"matchLabels":{"t":%q}},"resourceRules":[{"apiGroups":[""],"apiVersions":["v1"],"operations":["CREATE","UPDATE"],"resources":["configmaps"]}]},%s}}`, name, label, spec))
	mustDo(t, s, "POST", "/apis/admissionregistration.k8s.io/v1/mutatingadmissionpolicybindings", fmt.Sprintf(`{"apiVersion":"admissionregistration.k8s.io/v1","kind":"MutatingAdmissionPolicyBinding","metadata":{"name":%q},"spec":{"policyName":%q}}`, name+"-b", name))
}

func cm(name, label string) string {
	return fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q,"labels":{"t":%q}},"data":{"a":"1"}}`, name, label)
}

func TestMutations(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	mustDo(t, s, "POST", "/api/v1/namespaces", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"map"}}`)

	install(t, s, "apply", "apply", `"reinvocationPolicy":"Never","mutations":[{"patchType":"ApplyConfiguration","applyConfiguration":{"expression":"Object{metadata: Object.metadata{labels: {'applied': 'yes'}}, data: {'b': string(size(object.data))}}"}}]`)
	eventually(t, func() error {
		m := mustDo(t, s, "POST", cmPath, cm("a1", "apply"))
		defer do(t, s, "DELETE", cmPath+"/a1", "")
		labels := m["metadata"].(map[string]any)["labels"].(map[string]any)
		data := m["data"].(map[string]any)
		if labels["applied"] != "yes" || data["b"] != "1" || data["a"] != "1" {
			return fmt.Errorf("apply: %v", m)
		}
		return nil
	})

	install(t, s, "patch", "patch", `"reinvocationPolicy":"Never","mutations":[{"patchType":"JSONPatch","jsonPatch":{"expression":"[JSONPatch{op: 'add', path: '/data/patched', value: object.metadata.name}, JSONPatch{op: 'test', path: '/data/a', value: '1'}]"}}]`)
	eventually(t, func() error {
		m := mustDo(t, s, "POST", cmPath, cm("p1", "patch"))
		defer do(t, s, "DELETE", cmPath+"/p1", "")
		if m["data"].(map[string]any)["patched"] != "p1" {
			return fmt.Errorf("patch: %v", m)
		}
		return nil
	})

	install(t, s, "broken", "broken", `"failurePolicy":"Fail","reinvocationPolicy":"Never","mutations":[{"patchType":"JSONPatch","jsonPatch":{"expression":"[JSONPatch{op: 'add', path: '/data/x', value: object.data.missing}]"}}]`)
	want := `policy 'broken' with binding 'broken-b' denied request: expression '[JSONPatch{op: 'add', path: '/data/x', value: object.data.missing}]' resulted in error: no such key: missing`
	eventually(t, func() error {
		code, m := do(t, s, "POST", cmPath, cm("b1", "broken"))
		if code != http.StatusForbidden || m["reason"] != "Invalid" || m["message"] != want {
			do(t, s, "DELETE", cmPath+"/b1", "")
			return fmt.Errorf("broken: %d %v %v", code, m["reason"], m["message"])
		}
		return nil
	})
	if code, _ := do(t, s, "GET", cmPath+"/b1", ""); code != http.StatusNotFound {
		t.Fatalf("refused object stored: %d", code)
	}

	install(t, s, "ignored", "ignored", `"failurePolicy":"Ignore","reinvocationPolicy":"Never","mutations":[{"patchType":"JSONPatch","jsonPatch":{"expression":"[JSONPatch{op: 'add', path: '/data/x', value: object.data.missing}]"}}]`)
	time.Sleep(200 * time.Millisecond)
	mustDo(t, s, "POST", cmPath, cm("i1", "ignored"))
}
