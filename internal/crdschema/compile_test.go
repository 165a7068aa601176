package crdschema

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestCompileRejects(t *testing.T) {
	cases := []struct {
		name   string
		schema string
		want   []string // substrings, each must appear in some error
	}{
		{"missing type of a field", `
type: object
properties:
  spec:
    properties:
      replicas: {type: integer}`,
			[]string{"schema.properties[spec].type: Required value: must not be empty for specified object fields"}},
		{"missing type at the root", `properties: {spec: {type: object}}`,
			[]string{"schema.type: Required value: must not be empty at the root"}},
		{"missing type of array items", `
type: object
properties:
  list: {type: array, items: {properties: {a: {type: string}}}}`,
			[]string{"schema.properties[list].items.type: Required value: must not be empty for specified array items"}},
		{"array without items", `
type: object
properties: {list: {type: array}}`,
			[]string{"schema.properties[list].items: Required value: must be specified"}},
		{"properties under preserve-unknown without type object", `
type: object
properties:
  blob:
    x-kubernetes-preserve-unknown-fields: true
    properties:
      inner:
        properties: {a: {type: string}}`,
			[]string{"schema.properties[blob].properties[inner].type: Required value"}},
		{"root not an object", `type: string`,
			[]string{`schema.type: Invalid value: "string": must be object at the root`}},
		{"additionalProperties at the root", `
type: object
additionalProperties: {type: string}`,
			[]string{"schema.additionalProperties: Forbidden: must not be used at the root"}},
		{"type inside anyOf", `
type: object
properties:
  a:
    type: string
    anyOf: [{type: string, maxLength: 3}]`,
			[]string{"schema.properties[a].anyOf[0].type: Forbidden: must be empty to be structural"}},
		{"anyOf property not specified structurally", `
type: object
anyOf:
- properties: {ghost: {minLength: 1}}`,
			[]string{"schema.properties[ghost]: Required value: because it is defined in schema.anyOf[0].properties[ghost]"}},
		{"metadata beyond name", `
type: object
properties:
  metadata:
    type: object
    properties: {labels: {type: object}}`,
			[]string{"schema.properties[metadata]: Forbidden: must not specify anything other than name and generateName"}},
		{"embedded resource not an object", `
type: object
properties:
  tpl: {type: string, x-kubernetes-embedded-resource: true, x-kubernetes-preserve-unknown-fields: true}`,
			[]string{`schema.properties[tpl].type: Invalid value: "string": must be object if x-kubernetes-embedded-resource is true`}},
		{"int-or-string with preserve-unknown", `
type: object
properties:
  port: {x-kubernetes-int-or-string: true, x-kubernetes-preserve-unknown-fields: true}`,
			[]string{"schema.properties[port].x-kubernetes-preserve-unknown-fields: Invalid value: true: must be false if x-kubernetes-int-or-string is true"}},
		{"uniqueItems", `
type: object
properties:
  l: {type: array, uniqueItems: true, items: {type: string}}`,
			[]string{"schema.properties[l].uniqueItems: Forbidden"}},
		{"properties and additionalProperties", `
type: object
properties:
  m:
    type: object
    properties: {a: {type: string}}
    additionalProperties: {type: string}`,
			[]string{"schema.properties[m].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive"}},
		{"unknown type", `
type: object
properties: {a: {type: text}}`,
			[]string{`schema.properties[a].type: Unsupported value: "text"`}},
		{"$ref", `
type: object
properties: {a: {$ref: "#/definitions/x"}}`,
			[]string{"schema.properties[a].$ref: Forbidden: $ref is not supported"}},
		{"nullable root", `{type: object, nullable: true}`,
			[]string{"schema.nullable: Forbidden: nullable cannot be true at the root"}},
		{"bad pattern", `
type: object
properties: {a: {type: string, pattern: "(["}}`,
			[]string{"schema.properties[a].pattern: Invalid value"}},
		{"list-type map without keys", `
type: object
properties:
  l: {type: array, x-kubernetes-list-type: map, items: {type: object, properties: {k: {type: string}}}}`,
			[]string{"schema.properties[l].x-kubernetes-list-map-keys: Required value"}},
		{"list-type set of granular objects", `
type: object
properties:
  l: {type: array, x-kubernetes-list-type: set, items: {type: object, properties: {k: {type: string}}}}`,
			[]string{"schema.properties[l].items.x-kubernetes-map-type: Invalid value"}},
		{"default with unknown fields", `
type: object
properties:
  spec:
    type: object
    default: {a: 1, b: 2}
    properties: {a: {type: integer}}`,
			[]string{`schema.properties[spec].default: Invalid value: {"a":1,"b":2}: must not have unknown fields`}},
		{"invalid default", `
type: object
properties:
  replicas: {type: integer, maximum: 10, default: 20}`,
			[]string{"schema.properties[replicas].default: Invalid value: 20"}},
		{"default in top-level metadata", `
type: object
properties:
  metadata: {type: object, default: {name: x}}`,
			[]string{"schema.properties[metadata].default: Forbidden: must not be set in top-level metadata"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, errs := Compile(props(t, tc.schema), field.NewPath("schema"))
			if s != nil || len(errs) == 0 {
				t.Fatalf("Compile accepted the schema")
			}
			all := joined(errs)
			for _, w := range tc.want {
				if !strings.Contains(all, w) {
					t.Errorf("errors do not contain %q:\n%s", w, all)
				}
			}
		})
	}
}

func TestCompileNilIsRequired(t *testing.T) {
	_, errs := Compile(nil, field.NewPath("spec", "versions").Index(0).Child("schema", "openAPIV3Schema"))
	if got := joined(errs); got != "spec.versions[0].schema.openAPIV3Schema: Required value" {
		t.Fatalf("got %q", got)
	}
}

func TestCompileAccepts(t *testing.T) {
	cases := map[string]string{
		"typical operator schema": `
type: object
properties:
  apiVersion: {type: string}
  kind: {type: string}
  metadata: {type: object}
  spec:
    type: object
    required: [image]
    properties:
      image: {type: string, minLength: 1}
      replicas: {type: integer, minimum: 0, maximum: 10, default: 1}
      port: {x-kubernetes-int-or-string: true}
      labels: {type: object, additionalProperties: {type: string}}
      template: {type: object, x-kubernetes-embedded-resource: true, x-kubernetes-preserve-unknown-fields: true}
      ports:
        type: array
        x-kubernetes-list-type: map
        x-kubernetes-list-map-keys: [name]
        items: {type: object, required: [name], properties: {name: {type: string}, port: {type: integer}}}
      tags: {type: array, x-kubernetes-list-type: set, items: {type: string}}
  status: {type: object, x-kubernetes-preserve-unknown-fields: true}`,
		"int-or-string spelled as anyOf": `
type: object
properties:
  port:
    x-kubernetes-int-or-string: true
    anyOf: [{type: integer}, {type: string}]`,
		"metadata restricting name": `
type: object
properties:
  metadata:
    type: object
    properties: {name: {type: string, maxLength: 10}}`,
		"preserve-unknown root": `{type: object, x-kubernetes-preserve-unknown-fields: true}`,
		"value validation over known fields": `
type: object
properties: {a: {type: string}, b: {type: string}}
oneOf: [{required: [a]}, {required: [b]}]`,
	}
	for name, y := range cases {
		t.Run(name, func(t *testing.T) { compile(t, y) })
	}
}
