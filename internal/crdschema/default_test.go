package crdschema

import (
	"reflect"
	"testing"
)

const defaultSchema = `
type: object
properties:
  spec:
    type: object
    properties:
      replicas: {type: integer, default: 1}
      mode: {type: string, default: "fast"}
      nullableWithDefault: {type: string, nullable: true, default: "d"}
      plain: {type: string}
      resources:
        type: object
        default: {}
        properties:
          cpu: {type: string, default: "100m"}
      options:
        type: object
        properties:
          retries: {type: integer, default: 3}
      ports:
        type: array
        items:
          type: object
          default: {port: 80}
          properties:
            port: {type: integer, default: 8080}
            protocol: {type: string, default: TCP}
      limits:
        type: object
        additionalProperties:
          type: object
          default: {max: 5}
          properties:
            max: {type: integer}
            unit: {type: string, default: "n"}
`

func TestDefault(t *testing.T) {
	s := compile(t, defaultSchema)
	cases := []struct{ name, in, want string }{
		{"absent fields defaulted, nested defaulted parent created by its own default",
			`{"spec":{}}`,
			`{"spec":{"replicas":1,"mode":"fast","nullableWithDefault":"d","resources":{"cpu":"100m"}}}`},
		{"present values kept, absent parents without defaults not created",
			`{"spec":{"replicas":5,"mode":"slow","nullableWithDefault":"x","resources":{"cpu":"1"}}}`,
			`{"spec":{"replicas":5,"mode":"slow","nullableWithDefault":"x","resources":{"cpu":"1"}}}`},
		{"nested default applies when the parent exists",
			`{"spec":{"options":{}}}`,
			`{"spec":{"replicas":1,"mode":"fast","nullableWithDefault":"d","resources":{"cpu":"100m"},"options":{"retries":3}}}`},
		{"array items defaulted",
			`{"spec":{"ports":[{"port":1},{}, null]}}`,
			`{"spec":{"replicas":1,"mode":"fast","nullableWithDefault":"d","resources":{"cpu":"100m"},"ports":[{"port":1,"protocol":"TCP"},{"port":8080,"protocol":"TCP"},{"port":80,"protocol":"TCP"}]}}`},
		{"additionalProperties values defaulted",
			`{"spec":{"limits":{"a":{"max":1},"b":null}}}`,
			`{"spec":{"replicas":1,"mode":"fast","nullableWithDefault":"d","resources":{"cpu":"100m"},"limits":{"a":{"max":1,"unit":"n"},"b":{"max":5,"unit":"n"}}}}`},
		{"non-nullable nulls: defaulted when there is a default, dropped when not; nullable nulls kept",
			`{"spec":{"replicas":null,"plain":null,"nullableWithDefault":null}}`,
			`{"spec":{"replicas":1,"mode":"fast","nullableWithDefault":null,"resources":{"cpu":"100m"}}}`},
		{"no spec, nothing created",
			`{"kind":"K"}`,
			`{"kind":"K"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			obj := object(t, tc.in)
			s.Default(obj)
			if want := object(t, tc.want); !reflect.DeepEqual(obj, want) {
				t.Errorf("\n got %v\nwant %v", obj, want)
			}
		})
	}
}

func TestDefaultValuesAreFreshCopies(t *testing.T) {
	s := compile(t, defaultSchema)
	a, b := object(t, `{"spec":{}}`), object(t, `{"spec":{}}`)
	s.Default(a)
	s.Default(b)
	a["spec"].(map[string]any)["resources"].(map[string]any)["cpu"] = "changed"
	if got := b["spec"].(map[string]any)["resources"].(map[string]any)["cpu"]; got != "100m" {
		t.Fatalf("defaults share memory across objects: %v", got)
	}
	if _, ok := a["spec"].(map[string]any)["replicas"].(int64); !ok {
		t.Fatalf("integer default is %T, want int64", a["spec"].(map[string]any)["replicas"])
	}
}

// TestDefaultStatus: an object without status gets the status default (as
// Gateway API's Gateway and GatewayClass have) with the defaults within
// it; an object with a status, or a schema whose status has no default,
// is left alone.
func TestDefaultStatus(t *testing.T) {
	s := compile(t, `
type: object
properties:
  spec: {type: object, properties: {a: {type: string, default: x}}}
  status:
    type: object
    default: {conditions: [{type: Accepted, status: Unknown}]}
    properties:
      conditions:
        type: array
        items:
          type: object
          properties:
            type: {type: string}
            status: {type: string}
            reason: {type: string, default: Pending}
`)
	obj := object(t, `{"spec": {}}`)
	s.DefaultStatus(obj)
	want := object(t, `{"spec": {}, "status": {"conditions": [{"type": "Accepted", "status": "Unknown", "reason": "Pending"}]}}`)
	if !reflect.DeepEqual(obj, want) {
		t.Errorf("without status:\n got %v\nwant %v", obj, want)
	}
	has := object(t, `{"status": {"conditions": []}}`)
	s.DefaultStatus(has)
	if !reflect.DeepEqual(has, object(t, `{"status": {"conditions": []}}`)) {
		t.Errorf("a status was changed: %v", has)
	}
	plain := compile(t, `{type: object, properties: {status: {type: object, properties: {phase: {type: string}}}}}`)
	none := object(t, `{}`)
	plain.DefaultStatus(none)
	if len(none) != 0 {
		t.Errorf("a status without default was set: %v", none)
	}
}
