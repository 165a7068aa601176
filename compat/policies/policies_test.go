package policies

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/setpoint-dev/setpoint/compat/internal/difftest"
	"github.com/setpoint-dev/setpoint/compat/refcluster"
	"github.com/setpoint-dev/setpoint/testenv"
)

const (
	ns     = "policies-diff"
	prefix = "policies-diff-"
)

// refKubeconfig is the reference's admin kubeconfig (TestMain).
var refKubeconfig string

// TestMain takes the reference (with kube-controller-manager, whose
// validatingadmissionpolicy-status controller TestTypeChecking compares
// with ours) for the whole run.
func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	kc, stop, err := refcluster.Use(ctx, refcluster.Options{ControllerManager: true, EtcdArgs: []string{"--unsafe-no-fsync"}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "compat/policies: the reference:", err)
		return 1
	}
	defer stop()
	refKubeconfig = kc
	return m.Run()
}

func sides(t *testing.T, opts testenv.Options) (ref, sp *difftest.Side) {
	kc := refKubeconfig
	ref, err := difftest.SideFromKubeconfig("reference", kc)
	if err != nil {
		t.Fatal(err)
	}
	env, err := testenv.Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	if sp, err = difftest.SideFromKubeconfig("setpoint", env.Kubeconfig); err != nil {
		t.Fatal(err)
	}
	return ref, sp
}

func send(t *testing.T, s *difftest.Side, method, path, body string) *difftest.Response {
	t.Helper()
	r := difftest.Request{Method: method, Path: path}
	if body != "" {
		r.Body = []byte(body)
	}
	resp, err := s.Do(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// policyCase is one row of the table: a policy, its binding, and the
// object created under it.
type policyCase struct {
	name      string
	mutating  bool
	policy    string // the spec without matchConstraints
	binding   string // the spec without policyName
	object    string // the ConfigMap's data (JSON object)
	annotated bool   // the object carries annotation skip=1
}

var cases = []policyCase{
	{name: "deny-message", policy: `"validations":[{"expression":"!('bad' in object.data)","message":"no bad key"}]`, binding: `"validationActions":["Deny"]`, object: `{"bad":"1"}`},
	{name: "deny-expression", policy: `"validations":[{"expression":"size(object.data) < 2"}]`, binding: `"validationActions":["Deny"]`, object: `{"a":"1","b":"2"}`},
	{name: "allow", policy: `"validations":[{"expression":"size(object.data) < 2"}]`, binding: `"validationActions":["Deny"]`, object: `{"a":"1"}`},
	{name: "reason-forbidden", policy: `"validations":[{"expression":"false","messageExpression":"'name ' + object.metadata.name","reason":"Forbidden"}]`, binding: `"validationActions":["Deny"]`, object: `{}`},
	{name: "reason-too-large", policy: `"validations":[{"expression":"false","message":"too big","reason":"RequestEntityTooLarge"}]`, binding: `"validationActions":["Deny"]`, object: `{}`},
	{name: "variables", policy: `"variables":[{"name":"keys","expression":"object.data.size()"}],"validations":[{"expression":"variables.keys == 0","messageExpression":"'has ' + string(variables.keys) + ' keys'"}]`, binding: `"validationActions":["Deny"]`, object: `{"a":"1"}`},
	{name: "warn", policy: `"validations":[{"expression":"false","message":"just a warning"}]`, binding: `"validationActions":["Warn"]`, object: `{}`},
	{name: "audit-and-deny", policy: `"validations":[{"expression":"false","message":"both"}]`, binding: `"validationActions":["Audit","Deny"]`, object: `{}`},
	{name: "audit-only", policy: `"validations":[{"expression":"false","message":"audited"}]`, binding: `"validationActions":["Audit"]`, object: `{}`},
	{name: "runtime-error-fail", policy: `"failurePolicy":"Fail","validations":[{"expression":"object.data.missing == 'x'"}]`, binding: `"validationActions":["Deny"]`, object: `{}`},
	{name: "runtime-error-ignore", policy: `"failurePolicy":"Ignore","validations":[{"expression":"object.data.missing == 'x'"}]`, binding: `"validationActions":["Deny"]`, object: `{}`},
	{name: "message-expression-error", policy: `"validations":[{"expression":"false","message":"fallback","messageExpression":"string(object.data.missing)"}]`, binding: `"validationActions":["Deny"]`, object: `{}`},
	{name: "match-condition-false", policy: `"matchConditions":[{"name":"skip","expression":"!has(object.metadata.annotations)"}],"validations":[{"expression":"false"}]`, binding: `"validationActions":["Deny"]`, object: `{}`, annotated: true},
	{name: "match-condition-error", policy: `"matchConditions":[{"name":"err","expression":"object.data.missing == 'x'"}],"validations":[{"expression":"false"}]`, binding: `"validationActions":["Deny"]`, object: `{}`},
	{name: "param-missing-deny", policy: `"paramKind":{"apiVersion":"v1","kind":"ConfigMap"},"validations":[{"expression":"true"}]`, binding: `"paramRef":{"name":"nope","parameterNotFoundAction":"Deny"},"validationActions":["Deny"]`, object: `{}`},
	{name: "param-missing-allow", policy: `"paramKind":{"apiVersion":"v1","kind":"ConfigMap"},"validations":[{"expression":"false"}]`, binding: `"paramRef":{"name":"nope","parameterNotFoundAction":"Allow"},"validationActions":["Deny"]`, object: `{}`},
	{name: "param-value", policy: `"paramKind":{"apiVersion":"v1","kind":"ConfigMap"},"validations":[{"expression":"size(object.data) <= int(params.data.max)","messageExpression":"'at most ' + params.data.max"}]`, binding: `"paramRef":{"name":"policies-diff-param","parameterNotFoundAction":"Deny"},"validationActions":["Deny"]`, object: `{"a":"1","b":"2"}`},
	{name: "authorizer", policy: `"validations":[{"expression":"!authorizer.group('').resource('secrets').namespace('policies-diff').check('get').allowed()","message":"may read secrets"}]`, binding: `"validationActions":["Deny"]`, object: `{}`},
	{name: "request-fields", policy: `"validations":[{"expression":"request.operation != 'CREATE' || request.kind.kind != 'ConfigMap' || request.namespace != 'policies-diff'","messageExpression":"request.operation + ' ' + request.resource.resource + ' ' + request.name + ' ' + namespaceObject.metadata.name"}]`, binding: `"validationActions":["Deny"]`, object: `{}`},
	{name: "cost-per-call", policy: `"validations":[{"expression":"[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10].all(c, [1,2,3,4,5,6,7,8,9,10].all(d, [1,2,3,4,5,6,7,8,9,10].all(e, [1,2,3,4,5,6,7,8,9,10].all(f, a*b*c*d*e*f > 0))))))"}]`, binding: `"validationActions":["Deny"]`, object: `{}`},
	{name: "audit-annotation-error", policy: `"auditAnnotations":[{"key":"k","valueExpression":"string(object.data.missing)"}],"validations":[{"expression":"true"}]`, binding: `"validationActions":["Deny"]`, object: `{"a":"1"}`},
	{name: "mutate-apply", mutating: true, policy: `"reinvocationPolicy":"Never","mutations":[{"patchType":"ApplyConfiguration","applyConfiguration":{"expression":"Object{data: {'added': 'yes'}}"}}]`, object: `{"a":"1"}`},
	{name: "mutate-jsonpatch", mutating: true, policy: `"reinvocationPolicy":"Never","mutations":[{"patchType":"JSONPatch","jsonPatch":{"expression":"[JSONPatch{op: 'add', path: '/metadata/labels/patched', value: 'yes'}]"}}]`, object: `{"a":"1"}`},
	{name: "mutate-test-fails", mutating: true, policy: `"reinvocationPolicy":"Never","mutations":[{"patchType":"JSONPatch","jsonPatch":{"expression":"[JSONPatch{op: 'test', path: '/data/a', value: '2'}, JSONPatch{op: 'add', path: '/data/b', value: 'x'}]"}}]`, object: `{"a":"1"}`},
	{name: "mutate-error-fail", mutating: true, policy: `"failurePolicy":"Fail","reinvocationPolicy":"Never","mutations":[{"patchType":"JSONPatch","jsonPatch":{"expression":"[JSONPatch{op: 'replace', path: '/data/nope', value: 'x'}]"}}]`, object: `{"a":"1"}`},
	{name: "mutate-eval-error", mutating: true, policy: `"failurePolicy":"Fail","reinvocationPolicy":"Never","mutations":[{"patchType":"ApplyConfiguration","applyConfiguration":{"expression":"Object{data: {'x': object.data.missing}}"}}]`, object: `{"a":"1"}`},
}

func resourcePaths(c policyCase) (policies, bindings, kind string) {
	if c.mutating {
		return "/apis/admissionregistration.k8s.io/v1/mutatingadmissionpolicies", "/apis/admissionregistration.k8s.io/v1/mutatingadmissionpolicybindings", "MutatingAdmissionPolicy"
	}
	return "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies", "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings", "ValidatingAdmissionPolicy"
}

func install(t *testing.T, s *difftest.Side, c policyCase) {
	t.Helper()
	pols, binds, kind := resourcePaths(c)
	ops := `"CREATE","UPDATE"`
	pol := fmt.Sprintf(`{"apiVersion":"admissionregistration.k8s.io/v1","kind":%q,"metadata":{"name":%q},"spec":{
		"matchConstraints":{"namespaceSelector":{"matchLabels":{"setpoint-helper":"policies"}},"objectSelector":{"matchLabels":{"policies-case":%q}},
		"resourceRules":[{"apiGroups":[""],"apiVersions":["v1"],"operations":[%s],"resources":["configmaps"]}]},%s}}`, kind, prefix+c.name, c.name, ops, c.policy)
	bspec := ""
	if c.binding != "" {
		bspec = "," + c.binding
	}
	bind := fmt.Sprintf(`{"apiVersion":"admissionregistration.k8s.io/v1","kind":"%sBinding","metadata":{"name":%q},"spec":{"policyName":%q%s}}`, kind, prefix+c.name+"-b", prefix+c.name, bspec)
	for _, p := range [][2]string{{pols, pol}, {binds, bind}} {
		if r := send(t, s, "POST", p[0], p[1]); r.Code != http.StatusCreated {
			t.Fatalf("%s: POST %s: %d %s", s.Name, p[0], r.Code, r.Body)
		}
	}
}

func cleanup(t *testing.T, s *difftest.Side) {
	for _, c := range cases {
		pols, binds, _ := resourcePaths(c)
		send(t, s, "DELETE", binds+"/"+prefix+c.name+"-b", "")
		send(t, s, "DELETE", pols+"/"+prefix+c.name, "")
	}
	send(t, s, "DELETE", "/api/v1/namespaces/"+ns, "")
}

// seen is what a client sees of a create: code, Status reason, message and
// causes, warnings, and the stored object's labels and data.
func seen(r *difftest.Response) map[string]any {
	out := map[string]any{"code": r.Code}
	if w := r.Header.Values("Warning"); len(w) > 0 {
		out["warnings"] = w
	}
	var body map[string]any
	_ = json.Unmarshal(r.Body, &body)
	if body["kind"] == "Status" {
		out["reason"], out["message"] = body["reason"], body["message"]
		if d, ok := body["details"].(map[string]any); ok {
			out["causes"] = d["causes"]
		}
	} else if md, ok := body["metadata"].(map[string]any); ok {
		out["labels"], out["data"] = md["labels"], body["data"]
	}
	return out
}

func TestPolicyTable(t *testing.T) {
	ref, sp := sides(t, testenv.Options{})
	both := []*difftest.Side{ref, sp}
	for _, s := range both {
		cleanup(t, s)
	}
	for _, s := range both {
		waitGone(t, s, "/api/v1/namespaces/"+ns)
		if r := send(t, s, "POST", "/api/v1/namespaces", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"`+ns+`","labels":{"setpoint-helper":"policies"}}}`); r.Code != http.StatusCreated {
			t.Fatalf("%s: namespace: %d %s", s.Name, r.Code, r.Body)
		}
		send(t, s, "POST", "/api/v1/namespaces/"+ns+"/configmaps", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"policies-diff-param"},"data":{"max":"1"}}`)
		for _, c := range cases {
			install(t, s, c)
		}
	}
	t.Cleanup(func() {
		for _, s := range both {
			cleanup(t, s)
		}
	})
	time.Sleep(3 * time.Second) // the reference's policy informers
	differ := 0
	for _, c := range cases {
		obj := func(name string) string {
			ann := ""
			if c.annotated {
				ann = `,"annotations":{"skip":"1"}`
			}
			return fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q,"labels":{"policies-case":%q}%s},"data":%s}`, name, c.name, ann, c.object)
		}
		path := "/api/v1/namespaces/" + ns + "/configmaps"
		var got [2]map[string]any
		for i, s := range both {
			r := send(t, s, "POST", path, obj("obj-"+c.name))
			got[i] = seen(r)
			if r.Code >= 300 {
				if g := send(t, s, "GET", path+"/obj-"+c.name, ""); g.Code != http.StatusNotFound {
					t.Errorf("%s %s: refused object stored (%d)", s.Name, c.name, g.Code)
				}
			}
			send(t, s, "DELETE", path+"/obj-"+c.name, "")
		}
		if !reflect.DeepEqual(normalize(got[0]), normalize(got[1])) {
			differ++
			t.Errorf("%s differs:\n reference %v\n setpoint  %v", c.name, got[0], got[1])
		} else {
			t.Logf("%s: same: %v", c.name, got[0])
		}
	}
	t.Logf("%d of %d cases differ", differ, len(cases))
}

// normalize makes JSON numbers and string lists comparable.
func normalize(m map[string]any) any {
	b, _ := json.Marshal(m)
	var out any
	_ = json.Unmarshal(b, &out)
	return strings.TrimSpace(string(b)) + ""
}

func waitGone(t *testing.T, s *difftest.Side, path string) {
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if r := send(t, s, "GET", path, ""); r.Code == http.StatusNotFound {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("%s: %s still there", s.Name, path)
}
