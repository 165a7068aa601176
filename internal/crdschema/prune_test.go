package crdschema

import (
	"reflect"
	"testing"
)

const pruneSchema = `
type: object
properties:
  spec:
    type: object
    properties:
      image: {type: string}
      items:
        type: array
        items: {type: object, properties: {name: {type: string}}}
      labels: {type: object, additionalProperties: {type: string}}
      selectors:
        type: object
        additionalProperties: {type: object, properties: {key: {type: string}}}
      anything: {type: object, additionalProperties: true}
      raw: {type: object, x-kubernetes-preserve-unknown-fields: true, properties: {typed: {type: object, properties: {a: {type: string}}}}}
      template: {type: object, x-kubernetes-embedded-resource: true, properties: {spec: {type: object, properties: {x: {type: string}}}}}
      loose: {type: object, x-kubernetes-embedded-resource: true, x-kubernetes-preserve-unknown-fields: true}
  status: {type: object, properties: {ready: {type: boolean}}}
`

func TestPrune(t *testing.T) {
	s := compile(t, pruneSchema)
	cases := []struct {
		name, in, want string
		pruned         []string
	}{
		{"root meta kept, unknown root and nested fields dropped",
			`{"apiVersion":"x/v1","kind":"K","metadata":{"name":"a","whatever":1},"extra":1,"spec":{"image":"i","foo":"bar"}}`,
			`{"apiVersion":"x/v1","kind":"K","metadata":{"name":"a","whatever":1},"spec":{"image":"i"}}`,
			[]string{"extra", "spec.foo"}},
		{"array items",
			`{"spec":{"items":[{"name":"a","bar":1},{"name":"b"},{"bar":2,"baz":3}]}}`,
			`{"spec":{"items":[{"name":"a"},{"name":"b"},{}]}}`,
			[]string{"spec.items[0].bar", "spec.items[2].bar", "spec.items[2].baz"}},
		{"additionalProperties maps keep keys, prune inside values",
			`{"spec":{"labels":{"a":"1","b":"2"},"selectors":{"s1":{"key":"k","op":"In"}}}}`,
			`{"spec":{"labels":{"a":"1","b":"2"},"selectors":{"s1":{"key":"k"}}}}`,
			[]string{"spec.selectors.s1.op"}},
		{"additionalProperties true keeps keys but not nested fields",
			`{"spec":{"anything":{"a":1,"b":{"c":2}}}}`,
			`{"spec":{"anything":{"a":1,"b":{}}}}`,
			[]string{"spec.anything.b.c"}},
		{"preserve-unknown subtree keeps unknown fields, prunes inside specified ones",
			`{"spec":{"raw":{"free":{"deep":[1,{"x":1}]},"typed":{"a":"1","b":"2"}}}}`,
			`{"spec":{"raw":{"free":{"deep":[1,{"x":1}]},"typed":{"a":"1"}}}}`,
			[]string{"spec.raw.typed.b"}},
		{"embedded resource keeps apiVersion kind metadata",
			`{"spec":{"template":{"apiVersion":"v1","kind":"Pod","metadata":{"labels":{"a":"b"}},"spec":{"x":"1","y":"2"},"other":1}}}`,
			`{"spec":{"template":{"apiVersion":"v1","kind":"Pod","metadata":{"labels":{"a":"b"}},"spec":{"x":"1"}}}}`,
			[]string{"spec.template.other", "spec.template.spec.y"}},
		{"embedded preserve-unknown keeps everything",
			`{"spec":{"loose":{"apiVersion":"v1","kind":"Pod","spec":{"containers":[]}}}}`,
			`{"spec":{"loose":{"apiVersion":"v1","kind":"Pod","spec":{"containers":[]}}}}`,
			nil},
		{"wrong types are left for validation",
			`{"spec":"text","status":{"ready":"yes"}}`,
			`{"spec":"text","status":{"ready":"yes"}}`,
			nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			obj := object(t, tc.in)
			pruned := s.Prune(obj)
			if want := object(t, tc.want); !reflect.DeepEqual(obj, want) {
				t.Errorf("pruned object\n got %v\nwant %v", obj, want)
			}
			if !reflect.DeepEqual(pruned, tc.pruned) {
				t.Errorf("pruned paths got %q want %q", pruned, tc.pruned)
			}
		})
	}
}

func TestPrunePreserveUnknownRoot(t *testing.T) {
	s := compile(t, `
type: object
x-kubernetes-preserve-unknown-fields: true
properties:
  spec: {type: object, properties: {a: {type: string}}}`)
	obj := object(t, `{"free":1,"spec":{"a":"x","b":"y"}}`)
	pruned := s.Prune(obj)
	if want := object(t, `{"free":1,"spec":{"a":"x"}}`); !reflect.DeepEqual(obj, want) {
		t.Errorf("got %v want %v", obj, want)
	}
	if !reflect.DeepEqual(pruned, []string{"spec.b"}) {
		t.Errorf("pruned %q", pruned)
	}
}
