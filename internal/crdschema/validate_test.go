package crdschema

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

const validateSchema = `
type: object
properties:
  metadata:
    type: object
    properties: {name: {type: string, maxLength: 8}}
  spec:
    type: object
    required: [image]
    properties:
      image: {type: string, minLength: 1, maxLength: 20}
      replicas: {type: integer, minimum: 1, maximum: 10}
      ratio: {type: number, exclusiveMinimum: true, minimum: 0, exclusiveMaximum: true, maximum: 1}
      mode: {type: string, enum: [fast, slow]}
      level: {type: integer, enum: [1, 2]}
      name: {type: string, pattern: "^[a-z]+$"}
      port: {x-kubernetes-int-or-string: true}
      note: {type: string, nullable: true}
      strict: {type: string}
      email: {type: string, format: email}
      color: {type: string, format: not-a-known-format}
      args: {type: array, minItems: 1, maxItems: 2, items: {type: string}}
      tags: {type: array, x-kubernetes-list-type: set, items: {type: string}}
      ports:
        type: array
        x-kubernetes-list-type: map
        x-kubernetes-list-map-keys: [name]
        items: {type: object, required: [name], properties: {name: {type: string}, port: {type: integer}}}
      choice:
        type: object
        properties: {a: {type: string}, b: {type: string}}
        oneOf: [{required: [a]}, {required: [b]}]
      notEmpty:
        type: string
        not: {enum: [""]}
      either:
        type: string
        anyOf: [{minLength: 5}, {pattern: "^x"}]
      both:
        type: string
        allOf: [{minLength: 2}, {maxLength: 3}]
`

func TestValidate(t *testing.T) {
	s := compile(t, validateSchema)
	cases := []struct {
		name string
		obj  string
		want []string
	}{
		{"valid", `{"metadata":{"name":"ok"},"spec":{"image":"nginx","replicas":3,"ratio":0.5,"mode":"fast","level":2,"name":"abc","port":8080,"note":null,"email":"a@b.c","color":"whatever","args":["a"],"tags":["a","b"],"ports":[{"name":"http","port":80},{"name":"https","port":443}],"choice":{"a":"x"},"notEmpty":"y","either":"xy","both":"abc"}}`, nil},
		{"int-or-string accepts a string", `{"spec":{"image":"i","port":"http"}}`, nil},
		// The bad-input cases of the issue.
		{"wrong type", `{"spec":{"image":"i","replicas":"three"}}`,
			[]string{`spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"`}},
		{"missing required", `{"spec":{"replicas":1}}`,
			[]string{`spec.image: Required value`}},
		{"above maximum", `{"spec":{"image":"i","replicas":11}}`,
			[]string{`spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10`}},
		{"below minimum", `{"spec":{"image":"i","replicas":0}}`,
			[]string{`spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal to 1`}},
		{"exclusive bounds", `{"spec":{"image":"i","ratio":1}}`,
			[]string{`spec.ratio: Invalid value: 1: spec.ratio in body should be less than 1`}},
		{"enum", `{"spec":{"image":"i","mode":"medium","level":3}}`,
			[]string{`spec.level: Unsupported value: 3: supported values: "1", "2"`, `spec.mode: Unsupported value: "medium": supported values: "fast", "slow"`}},
		{"pattern", `{"spec":{"image":"i","name":"ABC"}}`,
			[]string{`spec.name: Invalid value: "ABC": spec.name in body should match '^[a-z]+$'`}},
		{"int-or-string rejects others", `{"spec":{"image":"i","port":true}}`,
			[]string{`spec.port: Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean"`}},
		{"null in a non-nullable field", `{"spec":{"image":"i","strict":null}}`,
			[]string{`spec.strict: Invalid value: "null": spec.strict in body must be of type string: "null"`}},
		{"maxLength", `{"spec":{"image":"aaaaaaaaaaaaaaaaaaaaa"}}`,
			[]string{`spec.image: Too long: may not be more than 20 bytes`}},
		{"minLength", `{"spec":{"image":""}}`,
			[]string{`spec.image: Invalid value: "": spec.image in body should be at least 1 chars long`}},
		{"maxItems", `{"spec":{"image":"i","args":["a","b","c"]}}`,
			[]string{`spec.args: Too many: 3: must have at most 2 items`}},
		{"minItems", `{"spec":{"image":"i","args":[]}}`,
			[]string{`spec.args: Invalid value: 0: spec.args in body should have at least 1 items`}},
		{"format", `{"spec":{"image":"i","email":"not an email"}}`,
			[]string{`spec.email: Invalid value: "not an email": spec.email in body must be of type email: "not an email"`}},
		{"list-type set duplicates", `{"spec":{"image":"i","tags":["a","b","a","a"]}}`,
			[]string{`spec.tags[2]: Duplicate value: "a"`}},
		{"list-type map duplicate keys", `{"spec":{"image":"i","ports":[{"name":"http","port":1},{"name":"http","port":2}]}}`,
			[]string{`spec.ports[1]: Duplicate value: {"name":"http"}`}},
		{"oneOf", `{"spec":{"image":"i","choice":{"a":"x","b":"y"}}}`,
			// Junctor failures have no field path in Kubernetes either.
			[]string{`<nil>: Invalid value: "": "spec.choice" must validate one and only one schema (oneOf). Found 2 valid alternatives`}},
		{"not", `{"spec":{"image":"i","notEmpty":""}}`,
			[]string{`<nil>: Invalid value: "": "spec.notEmpty" must not validate the schema (not)`}},
		{"anyOf", `{"spec":{"image":"i","either":"abc"}}`,
			[]string{`<nil>: Invalid value: "": "spec.either" must validate at least one schema (anyOf)`, `spec.either: Invalid value: "abc": spec.either in body should be at least 5 chars long`}},
		{"allOf", `{"spec":{"image":"i","both":"abcd"}}`,
			[]string{`<nil>: Invalid value: "": "spec.both" must validate all the schemas (allOf)`, `spec.both: Too long: may not be more than 3 bytes`}},
		{"metadata name restriction from the schema", `{"metadata":{"name":"far-too-long"},"spec":{"image":"i"}}`,
			[]string{`metadata.name: Too long: may not be more than 8 bytes`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := errorStrings(s.Validate(object(t, tc.obj)))
			if len(got) == 0 {
				got = nil
			}
			if !sameSet(got, tc.want) {
				t.Errorf("\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// sameSet compares error lists ignoring order (kube-openapi's order within
// one field is not part of the contract).
func sameSet(a, b []string) bool {
	count := map[string]int{}
	for _, x := range a {
		count[x]++
	}
	for _, x := range b {
		count[x]--
	}
	for _, n := range count {
		if n != 0 {
			return false
		}
	}
	return len(a) == len(b)
}

func TestValidateErrorTypes(t *testing.T) {
	s := compile(t, validateSchema)
	errs := s.Validate(object(t, `{"spec":{"replicas":"x","mode":"m"}}`))
	types := map[string]field.ErrorType{}
	for _, e := range errs {
		types[e.Field] = e.Type
	}
	want := map[string]field.ErrorType{
		"spec.image":    field.ErrorTypeRequired,
		"spec.replicas": field.ErrorTypeTypeInvalid,
		"spec.mode":     field.ErrorTypeNotSupported,
	}
	if !reflect.DeepEqual(types, want) {
		t.Fatalf("got %v want %v", types, want)
	}
}

// TestStrictFieldValidation is the fourth bad-input case: unknown
// fields are pruned and reported with their paths (the server turns them
// into warnings, or a 422 under fieldValidation=Strict), and what remains
// validates.
func TestStrictFieldValidation(t *testing.T) {
	s := compile(t, validateSchema)
	obj := object(t, `{"apiVersion":"x/v1","kind":"K","metadata":{"name":"a"},"spec":{"image":"i","imagePullPolicy":"Always","ports":[{"name":"p","port":1,"protocol":"TCP"}]},"extra":true}`)
	pruned := s.Prune(obj)
	want := []string{"extra", "spec.imagePullPolicy", "spec.ports[0].protocol"}
	if !reflect.DeepEqual(pruned, want) {
		t.Fatalf("pruned %q want %q", pruned, want)
	}
	s.Default(obj)
	if errs := s.Validate(obj); len(errs) > 0 {
		t.Fatalf("pruned object invalid: %v", errs)
	}
}

func TestValidateDoesNotMutate(t *testing.T) {
	s := compile(t, validateSchema)
	obj := object(t, `{"spec":{"image":"i","tags":["a","a"],"x":1}}`)
	before := object(t, `{"spec":{"image":"i","tags":["a","a"],"x":1}}`)
	s.Validate(obj)
	if !reflect.DeepEqual(obj, before) {
		t.Fatalf("Validate mutated the object: %v", obj)
	}
}
