package crdschema

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

const costHint = " (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"

// TestCompileRuleErrors: rules refused when a CRD is created, with
// kube-apiserver's field paths and messages.
func TestCompileRuleErrors(t *testing.T) {
	cases := []struct {
		name, schema string
		want         []string
	}{
		{"syntax error", `
type: object
properties: {name: {type: string, x-kubernetes-validations: [{rule: "self.startsWith("}]}}`,
			[]string{`schema.properties[name].x-kubernetes-validations[0].rule: Invalid value: {"Rule":"self.startsWith(","Message":"","MessageExpression":"","Reason":null,"FieldPath":"","OptionalOldSelf":null}: compilation failed: ERROR: <input>:1:17: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', ')', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}
 | self.startsWith(
 | ................^`}},
		{"unknown field", `
type: object
properties: {name: {type: string, maxLength: 10, x-kubernetes-validations: [{rule: "self.nope == 1"}]}}`,
			[]string{`schema.properties[name].x-kubernetes-validations[0].rule: Invalid value: {"Rule":"self.nope == 1","Message":"","MessageExpression":"","Reason":null,"FieldPath":"","OptionalOldSelf":null}: compilation failed: ERROR: <input>:1:5: type 'string' does not support field selection
 | self.nope == 1
 | ....^`}},
		{"not a bool, messageExpression not a string", `
type: object
properties: {name: {type: string, maxLength: 10, x-kubernetes-validations: [{rule: "self.size()"}, {rule: "true", messageExpression: "1"}]}}`,
			[]string{
				`schema.properties[name].x-kubernetes-validations[0].rule: Invalid value: {"Rule":"self.size()","Message":"","MessageExpression":"","Reason":null,"FieldPath":"","OptionalOldSelf":null}: cel expression must evaluate to a bool`,
				`schema.properties[name].x-kubernetes-validations[1].messageExpression: Invalid value: {"Rule":"true","Message":"","MessageExpression":"1","Reason":null,"FieldPath":"","OptionalOldSelf":null}: messageExpression must evaluate to a string`}},
		{"a function newer than the compatibility version", `
type: object
properties: {list: {type: array, maxItems: 10, items: {type: string, maxLength: 10}, x-kubernetes-validations: [{rule: "self.includes('a')"}]}}`,
			[]string{`schema.properties[list].x-kubernetes-validations[0].rule: Invalid value: {"Rule":"self.includes('a')","Message":"","MessageExpression":"","Reason":null,"FieldPath":"","OptionalOldSelf":null}: compilation failed: ERROR: <input>:1:14: undeclared reference to 'includes' (in container '')
 | self.includes('a')
 | .............^`}},
		{"rule fields", `
type: object
properties:
  spec:
    type: object
    properties: {a: {type: integer}}
    x-kubernetes-validations:
    - {rule: "  "}
    - {rule: "self.a > 0", message: " "}
    - {rule: "self.a > 0", message: "two\nlines"}
    - {rule: "self.a >\n 0"}
    - {rule: "self.a > 0", messageExpression: " "}
    - {rule: "self.a > 0", reason: Bogus}
    - {rule: "self.a > 0", fieldPath: ".b"}
    - {rule: "self.a > 0", fieldPath: " "}`,
			[]string{
				`schema.properties[spec].x-kubernetes-validations[0].rule: Required value: rule is not specified`,
				`schema.properties[spec].x-kubernetes-validations[1].message: Invalid value: " ": must be non-empty if specified`,
				`schema.properties[spec].x-kubernetes-validations[2].message: Invalid value: "two\nlines": must not contain line breaks`,
				`schema.properties[spec].x-kubernetes-validations[3].message: Required value: message must be specified if rule contains line breaks`,
				`schema.properties[spec].x-kubernetes-validations[4].messageExpression: Required value: messageExpression must be non-empty if specified`,
				`schema.properties[spec].x-kubernetes-validations[5].reason: Unsupported value: "Bogus": supported values: "FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"`,
				`schema.properties[spec].x-kubernetes-validations[6].fieldPath: Invalid value: ".b": must be a valid path`,
				// kube-apiserver's order within one field
				`schema.properties[spec].x-kubernetes-validations[7].fieldPath: Invalid value: " ": must be non-empty if specified`,
				`schema.properties[spec].x-kubernetes-validations[7].fieldPath: Invalid value: " ": must be a valid path`}},
		{"oldSelf where old values cannot be correlated", `
type: object
properties:
  list: {type: array, maxItems: 10, items: {type: object, properties: {a: {type: string, maxLength: 10, x-kubernetes-validations: [{rule: "self == oldSelf"}]}}}}`,
			[]string{`schema.properties[list].items.properties[a].x-kubernetes-validations[0].rule: Invalid value: "self == oldSelf": oldSelf cannot be used on the uncorrelatable portion of the schema within schema.properties[list]`}},
		{"optionalOldSelf without oldSelf", `
type: object
properties: {a: {type: string, maxLength: 10, x-kubernetes-validations: [{rule: "self != 'x'", optionalOldSelf: true}]}}`,
			[]string{`schema.properties[a].x-kubernetes-validations[0].optionalOldSelf: Invalid value: true: may not be set if oldSelf is not used in rule`}},
		{"a default the rules refuse", `
type: object
properties: {tier: {type: string, default: "bronze", x-kubernetes-validations: [{rule: "self != 'bronze'", message: "no bronze"}]}}`,
			[]string{`schema.properties[tier].default: Invalid value: "bronze": no bronze`}},
		{"estimated rule cost", `
type: object
properties:
  list: {type: array, maxItems: 2000, items: {type: string, maxLength: 10}, x-kubernetes-validations: [{rule: "self.all(x, self.all(y, x.size() > 0))"}]}`,
			[]string{"schema.properties[list].x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of 2.4x" + costHint}},
		{"unbounded rule cost", `
type: object
properties:
  list: {type: array, items: {type: object, properties: {s: {type: string}}, x-kubernetes-validations: [{rule: "self.s.matches('^a')"}]}}`,
			[]string{
				"schema.properties[list].items.x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x" + costHint,
				"schema.properties[list].items.x-kubernetes-validations[0].rule: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema",
				"schema: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x" + costHint}},
		{"total cost", totalCostSchema(13),
			[]string{
				"schema.properties[p00].x-kubernetes-validations[0].rule: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema",
				"schema.properties[p01].x-kubernetes-validations[0].rule: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema",
				"schema.properties[p02].x-kubernetes-validations[0].rule: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema",
				"schema.properties[p03].x-kubernetes-validations[0].rule: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema",
				"schema: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of 1.015521x" + costHint}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, errs := Compile(props(t, tc.schema), field.NewPath("schema"))
			if s != nil {
				t.Fatal("Compile accepted the schema")
			}
			if got := errorStrings(errs); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("errors\n got %q\nwant %q", got, tc.want)
			}
		})
	}
	if _, errs := Compile(props(t, totalCostSchema(12)), nil); len(errs) > 0 {
		t.Errorf("twelve rules under the total: %v", errs)
	}
}

// totalCostSchema has n properties p00, p01, ..., each a list with a rule
// estimated under the per-expression limit, costliest first.
func totalCostSchema(n int) string {
	var b strings.Builder
	b.WriteString("type: object\nproperties:\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "  p%02d: {type: array, maxItems: %d, items: {type: string, maxLength: 10}, x-kubernetes-validations: [{rule: \"self.all(x, self.all(y, x.size() > 0))\"}]}\n", i, 1200-10*i)
	}
	return b.String()
}

// TestValidateCRDUpdateRules: on update, rules the CRD already had compile
// in the environment of stored expressions, and an unchanged schema is not
// held to the per-expression cost limit.
func TestValidateCRDUpdateRules(t *testing.T) {
	withRule := func(rule string, maxItems int64) *apiextv1.CustomResourceDefinition {
		c := crd(t)
		spec := c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
		spec.Properties["list"] = apiextv1.JSONSchemaProps{Type: "array", MaxItems: &maxItems,
			Items:        &apiextv1.JSONSchemaPropsOrArray{Schema: &apiextv1.JSONSchemaProps{Type: "string", MaxLength: ptr(int64(10))}},
			XValidations: apiextv1.ValidationRules{{Rule: rule}}}
		c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = spec
		return c
	}
	includes := withRule("self.includes('a')", 10)
	if errs := ValidateCRD(includes); len(errs) != 1 || !strings.Contains(errs[0].Error(), "undeclared reference to 'includes'") {
		t.Errorf("create with includes(): %v", errs)
	}
	updated := includes.DeepCopy()
	updated.Spec.Versions[0].AdditionalPrinterColumns = nil
	if errs := ValidateCRDUpdate(updated, includes); len(errs) > 0 {
		t.Errorf("update keeping includes(): %v", errs)
	}

	expensive := withRule("self.all(x, self.all(y, x.size() > 0))", 2000)
	if errs := ValidateCRD(expensive); len(errs) != 1 || !strings.Contains(errs[0].Error(), "estimated rule cost exceeds budget") {
		t.Errorf("create with an expensive rule: %v", errs)
	}
	relabeled := expensive.DeepCopy()
	relabeled.Labels = map[string]string{"a": "b"}
	if errs := ValidateCRDUpdate(relabeled, expensive); len(errs) > 0 {
		t.Errorf("update with the schema unchanged: %v", errs)
	}
	costlier := withRule("self.all(x, self.all(y, x.size() >= 0))", 2000)
	if errs := ValidateCRDUpdate(costlier, expensive); len(errs) != 1 || !strings.Contains(errs[0].Error(), "estimated rule cost exceeds budget") {
		t.Errorf("update changing the schema: %v", errs)
	}
}

func ptr[T any](v T) *T { return &v }
