package crdschema

import (
	"context"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

const fuzzSchema = `
type: object
x-kubernetes-validations:
- {rule: "!has(self.spec) || !has(self.spec.note) || self.spec.note != self.metadata.name", message: "note must not repeat the name"}
properties:
  spec:
    type: object
    required: [image]
    allOf:
    - x-kubernetes-validations: [{rule: "!has(self.image) || self.image != 'all'", message: "allOf rule"}]
    x-kubernetes-validations:
    - {rule: "!has(self.replicas) || self.replicas <= 5 || self.image != 'x'", messageExpression: "'too many replicas for ' + self.image", fieldPath: ".replicas"}
    - {rule: "!has(self.choice) || self.choice == 'a' || has(self.note)", reason: FieldValueRequired, fieldPath: ".note", message: "b needs a note"}
    properties:
      image: {type: string, pattern: "^[a-z]+$", maxLength: 20, x-kubernetes-validations: [{rule: "!self.startsWith('z')", message: "no z"}]}
      replicas: {type: integer, minimum: 0, maximum: 10, default: 1, x-kubernetes-validations: [{rule: "self >= oldSelf", message: "no scale-down"}]}
      note: {type: string, nullable: true}
      port: {x-kubernetes-int-or-string: true, default: 80}
      labels: {type: object, additionalProperties: {type: string, default: "x", maxLength: 20, x-kubernetes-validations: [{rule: "self.size() < 8", messageExpression: "'label ' + self + ' is long'"}]}}
      born: {type: string, maxLength: 10, x-kubernetes-validations: [{rule: "oldSelf.hasValue() || self != 'bad'", optionalOldSelf: true, message: "born bad"}]}
      any: {type: object, additionalProperties: true}
      raw: {type: object, x-kubernetes-preserve-unknown-fields: true, properties: {typed: {type: object, properties: {a: {type: integer, default: 2}}}}}
      tpl: {type: object, x-kubernetes-embedded-resource: true, x-kubernetes-validations: [{rule: "!has(self.kind) || self.kind != 'Bad'", reason: FieldValueForbidden, message: "bad kind"}], properties: {spec: {type: object, properties: {x: {type: string}}}}}
      items:
        type: array
        maxItems: 8
        items: {type: object, default: {name: d}, x-kubernetes-validations: [{rule: "!has(self.name) || self.name != 'bad'", fieldPath: ".name", reason: FieldValueDuplicate}], properties: {name: {type: string, default: "n", maxLength: 10}, tags: {type: array, maxItems: 8, x-kubernetes-list-type: set, items: {type: string, maxLength: 10}, x-kubernetes-validations: [{rule: "self.all(t, t != 'bad')", message: "bad tag"}]}}}
      ports:
        type: array
        x-kubernetes-list-type: map
        x-kubernetes-list-map-keys: [name]
        maxItems: 8
        x-kubernetes-validations: [{rule: "self.all(p, p.name.size() > 0)", message: "names are not empty"}]
        items: {type: object, required: [name], properties: {name: {type: string, maxLength: 10, x-kubernetes-validations: [{rule: "self == oldSelf"}]}}}
      choice: {type: string, enum: [a, b]}
`

// FuzzPruneDefaultValidate sends random JSON objects through
// Prune → Default → Validate → ValidateRules (when not blocked), as create
// and as an update to an equal object: nothing panics, Prune is idempotent
// (a second pass removes nothing), defaulting never reintroduces unknown
// fields, validation never mutates the object, and ratcheting only ever
// drops errors: an update that changes nothing reports a subset of the
// errors of a create (schema and rules; the transition rules here hold on
// equal values).
func FuzzPruneDefaultValidate(f *testing.F) {
	for _, seed := range []string{
		`{}`,
		`{"spec":{"image":"abc","replicas":3}}`,
		`{"spec":{"replicas":null,"port":"http","labels":{"a":null,"b":"c"},"extra":1}}`,
		`{"spec":{"items":[null,{"name":"x","bogus":[1,2]},{"tags":["a","a"]}],"ports":[{"name":"a"},{"name":"a"},7]}}`,
		`{"spec":{"raw":{"typed":{"a":null,"b":1},"free":{"deep":true}},"tpl":{"apiVersion":"v1","kind":"K","metadata":{},"spec":{"x":"1","y":2}}}}`,
		`{"spec":"string","status":[1,2,{"a":null}],"metadata":{"name":"n"}}`,
		`{"spec":{"any":{"a":{"b":{"c":1}},"d":[{"e":1}]},"choice":"z","note":null}}`,
		`{"metadata":{"name":"n"},"spec":{"image":"all","note":"n","born":"bad","labels":{"a":"longlonglong"},"tpl":{"kind":"Bad"},"items":[{"name":"bad","tags":["bad"]}]}}`,
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
		errs := s.Validate(obj)
		var ruleErrs field.ErrorList
		if RulesBlocked(errs) == nil {
			ruleErrs = s.ValidateRules(context.Background(), obj, nil)
		}
		if !reflect.DeepEqual(before, obj) {
			t.Fatalf("validation mutated the object")
		}
		same := runtime.DeepCopyJSON(obj)
		if extra := notIn(s.ValidateUpdate(obj, same), errs); len(extra) > 0 {
			t.Fatalf("an unchanged object has new schema errors on update: %v", extra)
		}
		if RulesBlocked(errs) == nil {
			if extra := notIn(s.ValidateRules(context.Background(), obj, same), ruleErrs); len(extra) > 0 {
				t.Fatalf("an unchanged object has new rule errors on update: %v", extra)
			}
		}
		if RulesBlocked(errs) == nil {
			sameAsKubernetes(t, s, obj, nil)
			sameAsKubernetes(t, s, obj, same)
		}
		if !reflect.DeepEqual(before, obj) || !reflect.DeepEqual(before, same) {
			t.Fatalf("update validation mutated the objects")
		}
	})
}

// notIn returns the errors of a whose text is not among b's.
func notIn(a, b field.ErrorList) []string {
	have := map[string]bool{}
	for _, e := range b {
		have[e.Error()] = true
	}
	var out []string
	for _, e := range a {
		if !have[e.Error()] {
			out = append(out, e.Error())
		}
	}
	return out
}
