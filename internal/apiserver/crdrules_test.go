package apiserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/setpoint-dev/setpoint/internal/storage"
	"github.com/setpoint-dev/setpoint/internal/testserver"
)

// The expected statuses in these tests are kube-apiserver v1.37.2's, taken
// from a real cluster given the same CRDs and requests.

const (
	celWidgets   = "/apis/cel.example.com/v1/namespaces/default/widgets"
	celWidgetCRD = crdPath + "/widgets.cel.example.com"
	celKeyPrefix = "/registry/cel.example.com/widgets/default/"
	crdKeyPrefix = "/registry/apiextensions.k8s.io/customresourcedefinitions/"
)

type cause struct {
	Reason  string `json:"reason"`
	Message string `json:"message"`
	Field   string `json:"field"`
}

// invalid is the part of a 422 Status the tests compare.
type invalid struct {
	Message string
	Causes  []cause
}

// checkInvalid requires a 422 Invalid Status with want's message and
// causes, naming kind/group and name in its details.
func checkInvalid(t *testing.T, code int, body []byte, group, kind, name string, want invalid) {
	t.Helper()
	var st struct {
		Kind, Reason, Message string
		Code                  int
		Details               struct {
			Name, Group, Kind string
			Causes            []cause
		}
	}
	if err := json.Unmarshal(body, &st); err != nil {
		t.Fatalf("decode status %s: %v", body, err)
	}
	if code != http.StatusUnprocessableEntity || st.Kind != "Status" || st.Reason != "Invalid" || st.Code != 422 {
		t.Fatalf("want a 422 Invalid Status, got %d %s", code, body)
	}
	if st.Details.Name != name || st.Details.Group != group || st.Details.Kind != kind {
		t.Errorf("details name/group/kind = %q/%q/%q, want %q/%q/%q", st.Details.Name, st.Details.Group, st.Details.Kind, name, group, kind)
	}
	if st.Message != want.Message {
		t.Errorf("message\n got %q\nwant %q", st.Message, want.Message)
	}
	if !reflect.DeepEqual(st.Details.Causes, want.Causes) {
		t.Errorf("causes\n got %+v\nwant %+v", st.Details.Causes, want.Causes)
	}
}

// yamlToJSON converts a YAML document for a request body.
func yamlToJSON(t *testing.T, y string) string {
	t.Helper()
	j, err := yaml.YAMLToJSON([]byte(y))
	if err != nil {
		t.Fatalf("YAML: %v", err)
	}
	return string(j)
}

// startCELWidgets starts a server serving the widgets of
// testdata/cel/widget-crd.yaml (rules at every level).
func startCELWidgets(t *testing.T) (*testserver.Server, storage.Store) {
	t.Helper()
	s, kv := start(t, nil)
	crd, err := os.ReadFile("testdata/cel/widget-crd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if code, body, _ := do(t, s, http.MethodPost, crdPath, "application/json", yamlToJSON(t, string(crd))); code != http.StatusCreated {
		t.Fatalf("create CRD: %d %s", code, body)
	}
	waitFor(t, "widgets served", func() bool {
		code, _, _ := do(t, s, http.MethodGet, celWidgets, "", "")
		return code == http.StatusOK
	})
	return s, kv
}

// storedAt returns the stored state of key (nil when absent).
func storedAt(t *testing.T, kv storage.Store, key string) *storage.KeyValue {
	t.Helper()
	got, err := kv.Get(context.Background(), key)
	if errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	if err != nil {
		t.Fatalf("get %s: %v", key, err)
	}
	return &got
}

// unchanged requires key to be stored as before (or still absent).
func unchanged(t *testing.T, kv storage.Store, key string, before *storage.KeyValue) {
	t.Helper()
	after := storedAt(t, kv, key)
	switch {
	case before == nil && after != nil:
		t.Errorf("%s was written by a refused request", key)
	case before != nil && (after == nil || after.ModRevision != before.ModRevision || string(after.Value) != string(before.Value)):
		t.Errorf("%s changed by a refused request", key)
	}
}

// widget is a Widget of cel.example.com with the given spec (and status
// when not empty), as JSON.
func widget(name, spec, status string) string {
	s := `{"apiVersion":"cel.example.com/v1","kind":"Widget","metadata":{"name":"` + name + `"},"spec":` + spec
	if status != "" {
		s += `,"status":` + status
	}
	return s + "}"
}

// withRV sets metadata.resourceVersion in a JSON object.
func withRV(t *testing.T, obj, rv string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(obj), &m); err != nil {
		t.Fatal(err)
	}
	m["metadata"].(map[string]any)["resourceVersion"] = rv
	return string(mustJSON(t, m))
}

func currentRV(t *testing.T, s *testserver.Server, name string) string {
	t.Helper()
	code, body, _ := do(t, s, http.MethodGet, celWidgets+"/"+name, "", "")
	if code != http.StatusOK {
		t.Fatalf("get %s: %d %s", name, code, body)
	}
	return decode[map[string]any](t, body)["metadata"].(map[string]any)["resourceVersion"].(string)
}

const validWidgetSpec = `{"image":"nginx","minReplicas":1,"maxReplicas":2,"endpoint":"https://x","owner":"me","mode":"new",
 "primary":"a","secondary":"b","tier":"gold","born":"ok","tags":["a","b"],"limits":{"mem":"512Mi"},
 "ports":[{"name":"http","port":80}],"network":{"addr":"10.0.0.1","cidr":"10.0.0.0/8"},
 "url":"https://example.com/x","label":"ok-label","version":"1.2.3","template":{"apiVersion":"v1","kind":"ConfigMap"}}`

// withSpec returns validWidgetSpec with the given fields replaced.
func withSpec(t *testing.T, fields string) string {
	t.Helper()
	var base, over map[string]any
	if err := json.Unmarshal([]byte(validWidgetSpec), &base); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(fields), &over); err != nil {
		t.Fatal(err)
	}
	for k, v := range over {
		base[k] = v
	}
	return string(mustJSON(t, base))
}

const blockedDetail = "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"

func inv(message string, causes ...cause) invalid { return invalid{message, causes} }

func invalidCause(field, msg string) cause {
	return cause{"FieldValueInvalid", "Invalid value: " + msg, field}
}

// TestCustomResourceRules: x-kubernetes-validations on create, update and
// status writes, over HTTP, with kube-apiserver's 422 Status for each
// refusal; a refused write leaves the store as it was.
func TestCustomResourceRules(t *testing.T) {
	s, kv := startCELWidgets(t)
	if code, body, _ := do(t, s, http.MethodPost, celWidgets, "application/json", widget("w1", validWidgetSpec, "")); code != http.StatusCreated {
		t.Fatalf("create a valid widget: %d %s", code, body)
	}
	prefix := `Widget.cel.example.com "`
	cases := []struct {
		name, method, obj, subresource string
		objName                        string
		want                           invalid
	}{
		{"fieldPath", http.MethodPost, `{"image":"i","minReplicas":5,"maxReplicas":3}`, "", "w2",
			inv(prefix+`w2" is invalid: spec.minReplicas: Invalid value: minReplicas must not exceed maxReplicas`,
				invalidCause("spec.minReplicas", "minReplicas must not exceed maxReplicas"))},
		{"messageExpression", http.MethodPost, `{"image":"i","endpoint":"http://plain"}`, "", "w3",
			inv(prefix+`w3" is invalid: spec: Invalid value: endpoint http://plain must use https`,
				invalidCause("spec", "endpoint http://plain must use https"))},
		{"reason Required", http.MethodPost, `{"image":"i","owner":""}`, "", "w4",
			inv(prefix+`w4" is invalid: spec.owner: Required value: owner must not be empty`,
				cause{"FieldValueRequired", "Required value: owner must not be empty", "spec.owner"})},
		{"reason Forbidden", http.MethodPost, `{"image":"i","mode":"legacy"}`, "", "w5",
			inv(prefix+`w5" is invalid: spec.mode: Forbidden: legacy mode is forbidden`,
				cause{"FieldValueForbidden", "Forbidden: legacy mode is forbidden", "spec.mode"})},
		{"reason Duplicate", http.MethodPost, `{"image":"i","primary":"a","secondary":"a"}`, "", "w6",
			inv(prefix+`w6" is invalid: spec.secondary: Duplicate value`,
				cause{"FieldValueDuplicate", "Duplicate value", "spec.secondary"})},
		{"rule at the root", http.MethodPost, `{"image":"i"}`, "", "x1",
			inv(prefix+`x1" is invalid: <nil>: Invalid value: name must start with w`,
				invalidCause("<nil>", "name must start with w"))},
		{"blocked by a missing field", http.MethodPost, `{"minReplicas":5,"maxReplicas":3}`, "", "w7",
			inv(prefix+`w7" is invalid: [spec.image: Required value, <nil>: Invalid value: null: `+blockedDetail+`]`,
				cause{"FieldValueRequired", "Required value", "spec.image"}, invalidCause("<nil>", "null: "+blockedDetail))},
		{"blocked by a value too long", http.MethodPost, `{"image":"` + strings.Repeat("i", 65) + `","minReplicas":5,"maxReplicas":3}`, "", "w7",
			inv(prefix+`w7" is invalid: [spec.image: Too long: may not be more than 64 bytes, <nil>: Invalid value: null: `+blockedDetail+`]`,
				cause{"FieldValueTooLong", "Too long: may not be more than 64 bytes", "spec.image"}, invalidCause("<nil>", "null: "+blockedDetail))},
		{"optionalOldSelf on create", http.MethodPost, `{"image":"i","born":"bad"}`, "", "w8",
			inv(prefix+`w8" is invalid: spec.born: Invalid value: "bad": cannot be created as bad`,
				invalidCause("spec.born", `"bad": cannot be created as bad`))},
		{"list rule and item rule", http.MethodPost, `{"image":"i","tags":["a","B"]}`, "", "w9",
			inv(prefix+`w9" is invalid: [spec.tags: Invalid value: tags must be sorted, spec.tags[1]: Invalid value: "B": tags are lower-case words]`,
				invalidCause("spec.tags", "tags must be sorted"), invalidCause("spec.tags[1]", `"B": tags are lower-case words`))},
		{"quantity library on map values", http.MethodPost, `{"image":"i","limits":{"cpu":"2Gi"}}`, "", "w9",
			inv(prefix+`w9" is invalid: spec.limits[cpu]: Invalid value: "2Gi": must be a quantity below 1Gi`,
				invalidCause("spec.limits[cpu]", `"2Gi": must be a quantity below 1Gi`))},
		{"IP and CIDR libraries", http.MethodPost, `{"image":"i","network":{"addr":"192.168.0.1","cidr":"10.0.0.0/8"}}`, "", "w9",
			inv(prefix+`w9" is invalid: spec.network: Invalid value: addr must be in cidr`, invalidCause("spec.network", "addr must be in cidr"))},
		{"URL library", http.MethodPost, `{"image":"i","url":"http://localhost:8080/"}`, "", "w9",
			inv(prefix+`w9" is invalid: spec.url: Invalid value: "http://localhost:8080/": url must not point to localhost`,
				invalidCause("spec.url", `"http://localhost:8080/": url must not point to localhost`))},
		{"format library", http.MethodPost, `{"image":"i","label":"Not_A_Label"}`, "", "w9",
			inv(prefix+`w9" is invalid: spec.label: Invalid value: "Not_A_Label": `+dns1123LabelMsg, invalidCause("spec.label", `"Not_A_Label": `+dns1123LabelMsg))},
		{"semver library", http.MethodPost, `{"image":"i","version":"0.9.0"}`, "", "w9",
			inv(prefix+`w9" is invalid: spec.version: Invalid value: "0.9.0": version must be a semver above 1.0.0`,
				invalidCause("spec.version", `"0.9.0": version must be a semver above 1.0.0`))},
		{"embedded resource", http.MethodPost, `{"image":"i","template":{"apiVersion":"v1","kind":"Secret"}}`, "", "w9",
			inv(prefix+`w9" is invalid: spec.template: Invalid value: only ConfigMaps`, invalidCause("spec.template", "only ConfigMaps"))},
		{"transition rule on a scalar", http.MethodPut, `{"tier":"silver"}`, "", "w1",
			inv(prefix+`w1" is invalid: spec.tier: Invalid value: "silver": tier cannot be downgraded from gold`,
				invalidCause("spec.tier", `"silver": tier cannot be downgraded from gold`))},
		{"transition rule in a list-map item", http.MethodPut, `{"ports":[{"name":"http","port":81},{"name":"https","port":443}]}`, "", "w1",
			inv(prefix+`w1" is invalid: spec.ports[0].port: Invalid value: 81: the port of a named entry is immutable`,
				invalidCause("spec.ports[0].port", "81: the port of a named entry is immutable"))},
		{"status rule", http.MethodPut, `{}`, "/status", "w1",
			inv(prefix+`w1" is invalid: status.phase: Invalid value: "Lost": unknown phase`, invalidCause("status.phase", `"Lost": unknown phase`))},
		{"status schema", http.MethodPut, `{}`, "/status:count", "w1",
			inv(prefix+`w1" is invalid: status.count: Invalid value: -1: count in body should be greater than or equal to 0`,
				invalidCause("status.count", "-1: count in body should be greater than or equal to 0"))},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			key := celKeyPrefix + tc.objName
			before := storedAt(t, kv, key)
			var code int
			var body []byte
			switch {
			case tc.method == http.MethodPost:
				code, body, _ = do(t, s, http.MethodPost, celWidgets, "application/json", widget(tc.objName, tc.obj, ""))
			case tc.subresource == "":
				obj := withRV(t, widget(tc.objName, withSpec(t, tc.obj), ""), currentRV(t, s, tc.objName))
				code, body, _ = do(t, s, http.MethodPut, celWidgets+"/"+tc.objName, "application/json", obj)
			default:
				status := `{"phase":"Lost"}`
				if tc.subresource == "/status:count" {
					status = `{"phase":"Ready","count":-1}`
				}
				obj := withRV(t, widget(tc.objName, validWidgetSpec, status), currentRV(t, s, tc.objName))
				code, body, _ = do(t, s, http.MethodPut, celWidgets+"/"+tc.objName+"/status", "application/json", obj)
			}
			checkInvalid(t, code, body, "cel.example.com", "Widget", tc.objName, tc.want)
			unchanged(t, kv, key, before)
		})
	}

	// What passes: reordering a list-map keeps each entry's port; a valid
	// status; transition rules do not run on create.
	reordered := withRV(t, widget("w1", withSpec(t, `{"ports":[{"name":"https","port":443},{"name":"http","port":80}]}`), ""), currentRV(t, s, "w1"))
	if code, body, _ := do(t, s, http.MethodPut, celWidgets+"/w1", "application/json", reordered); code != http.StatusOK {
		t.Errorf("reorder ports: %d %s", code, body)
	}
	status := withRV(t, widget("w1", validWidgetSpec, `{"phase":"Ready","count":1}`), currentRV(t, s, "w1"))
	if code, body, _ := do(t, s, http.MethodPut, celWidgets+"/w1/status", "application/json", status); code != http.StatusOK {
		t.Errorf("valid status: %d %s", code, body)
	}
	if code, body, _ := do(t, s, http.MethodPost, celWidgets, "application/json", widget("w10", `{"image":"i","tier":"silver"}`, `{"phase":"Lost"}`)); code != http.StatusCreated {
		t.Errorf("create with a transition rule and an ignored status: %d %s", code, body)
	}
}

const dns1123LabelMsg = `a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`
