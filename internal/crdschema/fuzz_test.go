package crdschema

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

const fuzzSchema = `
type: object
properties:
  spec:
    type: object
    required: [image]
    properties:
      image: {type: string, pattern: "^[a-z]+$"}
      replicas: {type: integer, minimum: 0, maximum: 10, default: 1}
      note: {type: string, nullable: true}
      port: {x-kubernetes-int-or-string: true, default: 80}
      labels: {type: object, additionalProperties: {type: string, default: "x"}}
      any: {type: object, additionalProperties: true}
      raw: {type: object, x-kubernetes-preserve-unknown-fields: true, properties: {typed: {type: object, properties: {a: {type: integer, default: 2}}}}}
      tpl: {type: object, x-kubernetes-embedded-resource: true, properties: {spec: {type: object, properties: {x: {type: string}}}}}
      items:
        type: array
        items: {type: object, default: {name: d}, properties: {name: {type: string, default: "n"}, tags: {type: array, x-kubernetes-list-type: set, items: {type: string}}}}
      ports:
        type: array
        x-kubernetes-list-type: map
        x-kubernetes-list-map-keys: [name]
        items: {type: object, required: [name], properties: {name: {type: string}}}
      choice: {type: string, enum: [a, b]}
`

// FuzzPruneDefaultValidate sends random JSON objects through
// Prune → Default → Validate: nothing panics, Prune is idempotent (a second
// pass removes nothing), and defaulting never reintroduces unknown fields.
func FuzzPruneDefaultValidate(f *testing.F) {
	for _, seed := range []string{
		`{}`,
		`{"spec":{"image":"abc","replicas":3}}`,
		`{"spec":{"replicas":null,"port":"http","labels":{"a":null,"b":"c"},"extra":1}}`,
		`{"spec":{"items":[null,{"name":"x","bogus":[1,2]},{"tags":["a","a"]}],"ports":[{"name":"a"},{"name":"a"},7]}}`,
		`{"spec":{"raw":{"typed":{"a":null,"b":1},"free":{"deep":true}},"tpl":{"apiVersion":"v1","kind":"K","metadata":{},"spec":{"x":"1","y":2}}}}`,
		`{"spec":"string","status":[1,2,{"a":null}],"metadata":{"name":"n"}}`,
		`{"spec":{"any":{"a":{"b":{"c":1}},"d":[{"e":1}]},"choice":"z","note":null}}`,
	} {
		f.Add(seed)
	}
	s := compile(f, fuzzSchema)
	f.Fuzz(func(t *testing.T, data string) {
		var obj map[string]any
		if err := utiljson.Unmarshal([]byte(data), &obj); err != nil || obj == nil {
			return
		}
		s.Prune(obj)
		again := runtime.DeepCopyJSON(obj)
		if extra := s.Prune(again); len(extra) > 0 {
			t.Fatalf("second Prune removed %q from %s", extra, data)
		}
		if !reflect.DeepEqual(again, obj) {
			t.Fatalf("second Prune changed the object")
		}
		s.Default(obj)
		if extra := s.Prune(runtime.DeepCopyJSON(obj)); len(extra) > 0 {
			t.Fatalf("Default introduced unknown fields %q", extra)
		}
		before := runtime.DeepCopyJSON(obj)
		s.Validate(obj)
		if !reflect.DeepEqual(before, obj) {
			t.Fatalf("Validate mutated the object")
		}
	})
}
