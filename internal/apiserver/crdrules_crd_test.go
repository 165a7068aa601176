package apiserver_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// TestCustomResourceRulesRatchet: after a CRD tightens its schema and
// rules, an update leaving an invalid value unchanged passes (a failing
// rule on it becomes a Warning header, as kube-apiserver sends it); a
// changed value, and a new object, are checked.
func TestCustomResourceRulesRatchet(t *testing.T) {
	s, kv := startCELWidgets(t)
	spec := `{"image":"nginx","note":"Bad Note","tier":"gold"}`
	if code, body, _ := do(t, s, http.MethodPost, celWidgets, "application/json", widget("w20", spec, "")); code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, body)
	}
	// Tighten: note must be a lower-case word, image at most 3 bytes.
	code, body, _ := do(t, s, http.MethodGet, celWidgetCRD, "", "")
	if code != http.StatusOK {
		t.Fatalf("get CRD: %d %s", code, body)
	}
	crd := decode[map[string]any](t, body)
	specSchema := crd["spec"].(map[string]any)["versions"].([]any)[0].(map[string]any)["schema"].(map[string]any)["openAPIV3Schema"].(map[string]any)["properties"].(map[string]any)["spec"].(map[string]any)["properties"].(map[string]any)
	specSchema["note"].(map[string]any)["x-kubernetes-validations"] = []any{map[string]any{"rule": "self.matches('^[a-z]+$')", "message": "note must be a lower-case word"}}
	specSchema["image"].(map[string]any)["maxLength"] = 3
	if code, body, _ := do(t, s, http.MethodPut, celWidgetCRD, "application/json", string(mustJSON(t, crd))); code != http.StatusOK {
		t.Fatalf("update CRD: %d %s", code, body)
	}
	waitFor(t, "the tightened schema served", func() bool {
		code, body, _ := do(t, s, http.MethodPost, celWidgets+"?dryRun=All", "application/json", widget("probe", `{"image":"abcd"}`, ""))
		return code == http.StatusUnprocessableEntity && strings.Contains(string(body), "Too long")
	})

	noteWarning := `299 - "spec.note: Invalid value: \"Bad Note\": note must be a lower-case word"`
	put := func(obj, sub string) (int, []byte, http.Header) {
		return do(t, s, http.MethodPut, celWidgets+"/w20"+sub, "application/json", withRV(t, obj, currentRV(t, s, "w20")))
	}

	code, body, hdr := put(widget("w20", `{"image":"nginx","note":"Bad Note","tier":"gold","minReplicas":1}`, ""), "")
	if code != http.StatusOK || !reflect.DeepEqual(hdr.Values("Warning"), []string{noteWarning}) {
		t.Errorf("update keeping the invalid values: %d %q %s", code, hdr.Values("Warning"), body)
	}
	code, body, hdr = put(widget("w20", `{"image":"nginx","note":"Bad Note","tier":"gold","minReplicas":1}`, `{"phase":"Ready"}`), "/status")
	if code != http.StatusOK || !reflect.DeepEqual(hdr.Values("Warning"), []string{noteWarning}) {
		t.Errorf("status update with the invalid spec values: %d %q %s", code, hdr.Values("Warning"), body)
	}

	key := celKeyPrefix + "w20"
	before := storedAt(t, kv, key)
	code, body, _ = put(widget("w20", `{"image":"nginx","note":"Worse Note","tier":"gold"}`, ""), "")
	checkInvalid(t, code, body, "cel.example.com", "Widget", "w20", inv(`Widget.cel.example.com "w20" is invalid: spec.note: Invalid value: "Worse Note": note must be a lower-case word`,
		invalidCause("spec.note", `"Worse Note": note must be a lower-case word`)))
	unchanged(t, kv, key, before)

	code, body, _ = put(widget("w20", `{"image":"nginx2","note":"Bad Note","tier":"gold"}`, ""), "")
	checkInvalid(t, code, body, "cel.example.com", "Widget", "w20", inv(`Widget.cel.example.com "w20" is invalid: [spec.image: Too long: may not be more than 3 bytes, <nil>: Invalid value: null: `+blockedDetail+`]`,
		cause{"FieldValueTooLong", "Too long: may not be more than 3 bytes", "spec.image"}, invalidCause("<nil>", "null: "+blockedDetail)))
	unchanged(t, kv, key, before)

	code, body, _ = do(t, s, http.MethodPost, celWidgets, "application/json", widget("w21", `{"image":"nginx","note":"Bad Note"}`, ""))
	checkInvalid(t, code, body, "cel.example.com", "Widget", "w21", inv(`Widget.cel.example.com "w21" is invalid: [spec.image: Too long: may not be more than 3 bytes, <nil>: Invalid value: null: `+blockedDetail+`]`,
		cause{"FieldValueTooLong", "Too long: may not be more than 3 bytes", "spec.image"}, invalidCause("<nil>", "null: "+blockedDetail)))
	unchanged(t, kv, celKeyPrefix+"w21", nil)
}

// celCRD is a one-version CRD of cel.example.com whose spec has schema
// specSchema (JSON).
func celCRD(plural, kind, specSchema string) string {
	return `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"` + plural + `.cel.example.com"},
 "spec":{"group":"cel.example.com","scope":"Namespaced","names":{"plural":"` + plural + `","kind":"` + kind + `"},
  "versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","properties":{"spec":` + specSchema + `}}}}]}}`
}

const costHint = " (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"

// TestCRDRuleRefusals: a CRD whose rules do not compile, cost too much or
// misuse rule fields is refused, on create and on update, with
// kube-apiserver's field paths (spec.validation.openAPIV3Schema when every
// version has the same schema) and messages; nothing is stored.
func TestCRDRuleRefusals(t *testing.T) {
	s, kv := startCELWidgets(t)
	sv := "spec.validation.openAPIV3Schema.properties[spec]"
	rule := func(r string) string {
		return `{"Rule":"` + strings.ReplaceAll(r, `"`, `\"`) + `","Message":"","MessageExpression":"","Reason":null,"FieldPath":"","OptionalOldSelf":null}`
	}
	cases := []struct {
		name, plural, schema string
		want                 []cause
	}{
		{"rules that do not compile", "gadgets",
			`{"type":"object","properties":{"name":{"type":"string","maxLength":10,"x-kubernetes-validations":[{"rule":"self.nope == 1"},{"rule":"self.size()"}]}}}`,
			[]cause{
				{"FieldValueInvalid", "Invalid value: " + rule("self.nope == 1") + ": compilation failed: ERROR: <input>:1:5: type 'string' does not support field selection\n | self.nope == 1\n | ....^", sv + ".properties[name].x-kubernetes-validations[0].rule"},
				{"FieldValueInvalid", "Invalid value: " + rule("self.size()") + ": cel expression must evaluate to a bool", sv + ".properties[name].x-kubernetes-validations[1].rule"}}},
		{"unbounded cost", "gizmos",
			`{"type":"object","properties":{"list":{"type":"array","items":{"type":"object","properties":{"s":{"type":"string"}},"x-kubernetes-validations":[{"rule":"self.s.matches('^a')"}]}}}}`,
			[]cause{
				{"FieldValueForbidden", "Forbidden: estimated rule cost exceeds budget by factor of more than 100x" + costHint, sv + ".properties[list].items.x-kubernetes-validations[0].rule"},
				{"FieldValueForbidden", "Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema", sv + ".properties[list].items.x-kubernetes-validations[0].rule"},
				{"FieldValueForbidden", "Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x" + costHint, "spec.validation.openAPIV3Schema"}}},
		{"cost over the per-expression limit", "doohickeys",
			`{"type":"object","properties":{"list":{"type":"array","maxItems":2000,"items":{"type":"string","maxLength":10},"x-kubernetes-validations":[{"rule":"self.all(x, self.all(y, x.size() > 0))"}]}}}`,
			[]cause{{"FieldValueForbidden", "Forbidden: estimated rule cost exceeds budget by factor of 2.4x" + costHint, sv + ".properties[list].x-kubernetes-validations[0].rule"}}},
		{"rule fields", "things",
			`{"type":"object","properties":{"a":{"type":"integer"},"l":{"type":"array","items":{"type":"object","properties":{"x":{"type":"string","maxLength":5,"x-kubernetes-validations":[{"rule":"self == oldSelf"}]}}}}},"x-kubernetes-validations":[
			 {"rule":"  "},{"rule":"self.a > 0","message":"two\nlines"},{"rule":"self.a > 0","reason":"Bogus"},{"rule":"self.a > 0","fieldPath":".b"},{"rule":"self.a > 0","optionalOldSelf":true},{"rule":"self.a > 0","messageExpression":"1"},{"rule":"self.a.includes(1)"}]}`,
			[]cause{
				{"FieldValueRequired", "Required value: rule is not specified", sv + ".x-kubernetes-validations[0].rule"},
				{"FieldValueInvalid", `Invalid value: "two\nlines": must not contain line breaks`, sv + ".x-kubernetes-validations[1].message"},
				{"FieldValueNotSupported", `Unsupported value: "Bogus": supported values: "FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"`, sv + ".x-kubernetes-validations[2].reason"},
				{"FieldValueInvalid", `Invalid value: ".b": must be a valid path`, sv + ".x-kubernetes-validations[3].fieldPath"},
				{"FieldValueInvalid", `Invalid value: "self == oldSelf": oldSelf cannot be used on the uncorrelatable portion of the schema within ` + sv + ".properties[l]", sv + ".properties[l].items.properties[x].x-kubernetes-validations[0].rule"}}},
		{"a default the rules refuse", "widget2s",
			`{"type":"object","properties":{"tier":{"type":"string","default":"bronze","x-kubernetes-validations":[{"rule":"self != 'bronze'","message":"no bronze"}]}}}`,
			[]cause{{"FieldValueInvalid", `Invalid value: "bronze": no bronze`, sv + ".properties[tier].default"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			name := tc.plural + ".cel.example.com"
			code, body, _ := do(t, s, http.MethodPost, crdPath, "application/json", celCRD(tc.plural, "Thing", tc.schema))
			checkInvalid(t, code, body, "apiextensions.k8s.io", "CustomResourceDefinition", name,
				invalid{`CustomResourceDefinition.apiextensions.k8s.io "` + name + `" is invalid: ` + causesMessage(tc.want), tc.want})
			unchanged(t, kv, crdKeyPrefix+name, nil)
		})
	}

	// An update bringing a rule that does not compile.
	before := storedAt(t, kv, crdKeyPrefix+"widgets.cel.example.com")
	code, body, _ := do(t, s, http.MethodGet, celWidgetCRD, "", "")
	if code != http.StatusOK {
		t.Fatalf("get CRD: %d %s", code, body)
	}
	crd := decode[map[string]any](t, body)
	props := crd["spec"].(map[string]any)["versions"].([]any)[0].(map[string]any)["schema"].(map[string]any)["openAPIV3Schema"].(map[string]any)["properties"].(map[string]any)["spec"].(map[string]any)["properties"].(map[string]any)
	props["mode"].(map[string]any)["x-kubernetes-validations"] = []any{map[string]any{"rule": "self.startsWith("}}
	code, body, _ = do(t, s, http.MethodPut, celWidgetCRD, "application/json", string(mustJSON(t, crd)))
	want := []cause{{"FieldValueInvalid", "Invalid value: " + rule("self.startsWith(") + ": compilation failed: ERROR: <input>:1:17: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', ')', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n | self.startsWith(\n | ................^",
		sv + ".properties[mode].x-kubernetes-validations[0].rule"}}
	checkInvalid(t, code, body, "apiextensions.k8s.io", "CustomResourceDefinition", "widgets.cel.example.com",
		invalid{`CustomResourceDefinition.apiextensions.k8s.io "widgets.cel.example.com" is invalid: ` + causesMessage(want), want})
	unchanged(t, kv, crdKeyPrefix+"widgets.cel.example.com", before)
}

// causesMessage is the list part of an Invalid Status message.
func causesMessage(causes []cause) string {
	parts := make([]string, len(causes))
	for i, c := range causes {
		parts[i] = c.Field + ": " + c.Message
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// TestCustomResourceRuleCost: kube-apiserver's runtime cost limits, per
// call and per object.
func TestCustomResourceRuleCost(t *testing.T) {
	s, kv := start(t, nil)
	alt := strings.Repeat("a|", 93)
	var rules []string
	for _, c := range []string{"b", "c", "d", "e", "f"} {
		rules = append(rules, `{"rule":"self.matches('^(`+alt+c+`)*$')","message":"`+c+`"}`)
	}
	schema := `{"type":"object","properties":{
	 "big":{"type":"array","maxItems":10,"items":{"type":"string","maxLength":50000,"x-kubernetes-validations":[` + strings.Join(rules, ",") + `]}},
	 "one":{"type":"string","maxLength":250000,"x-kubernetes-validations":[{"rule":"self.matches('^(` + alt + `b)*$')","message":"one"}]}}}`
	if code, body, _ := do(t, s, http.MethodPost, crdPath, "application/json", celCRD("costlies", "Costly", schema)); code != http.StatusCreated {
		t.Fatalf("create CRD: %d %s", code, body)
	}
	path := "/apis/cel.example.com/v1/namespaces/default/costlies"
	waitFor(t, "costlies served", func() bool {
		code, _, _ := do(t, s, http.MethodGet, path, "", "")
		return code == http.StatusOK
	})
	costly := func(name string, spec map[string]any) string {
		b, _ := json.Marshal(map[string]any{"apiVersion": "cel.example.com/v1", "kind": "Costly", "metadata": map[string]any{"name": name}, "spec": spec})
		return string(b)
	}
	item := strings.Repeat("a", 50000)
	five, ten := make([]string, 5), make([]string, 10)
	for i := range ten {
		ten[i] = item
	}
	copy(five, ten)
	if code, body, _ := do(t, s, http.MethodPost, path, "application/json", costly("within", map[string]any{"big": five})); code != http.StatusCreated {
		t.Errorf("within the budget: %d %s", code, body)
	}
	code, body, _ := do(t, s, http.MethodPost, path, "application/json", costly("budget", map[string]any{"big": ten}))
	msg := `"string": validation failed due to running out of cost budget, no further validation rules will be run`
	checkInvalid(t, code, body, "cel.example.com", "Costly", "budget",
		inv(`Costly.cel.example.com "budget" is invalid: spec.big[8]: Invalid value: `+msg, invalidCause("spec.big[8]", msg)))
	unchanged(t, kv, "/registry/cel.example.com/costlies/default/budget", nil)

	code, body, _ = do(t, s, http.MethodPost, path, "application/json", costly("call", map[string]any{"one": strings.Repeat("a", 250000)}))
	msg = `"string": 'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: one`
	checkInvalid(t, code, body, "cel.example.com", "Costly", "call",
		inv(`Costly.cel.example.com "call" is invalid: spec.one: Invalid value: `+msg, invalidCause("spec.one", msg)))
	unchanged(t, kv, "/registry/cel.example.com/costlies/default/call", nil)
}
