package openapi

import (
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// The k8s.io/apimachinery types with a custom JSON form describe it with
// these methods (metav1.Time, MicroTime, resource.Quantity,
// intstr.IntOrString).
type (
	schemaTyper     interface{ OpenAPISchemaType() []string }
	schemaFormatter interface{ OpenAPISchemaFormat() string }
	oneOfTyper      interface{ OpenAPIV3OneOfTypes() []string }
)

// methodsOf returns the value of t (or a pointer to one, for pointer
// receivers) as an interface, to probe for the methods above.
func methodsOf(t reflect.Type) []any {
	return []any{reflect.Zero(t).Interface(), reflect.New(t).Interface()}
}

// specialType returns the Swagger 2.0 schema of a type whose JSON form is
// not its Go structure, without description.
func specialType(t reflect.Type) (spec.Schema, bool) {
	for _, v := range methodsOf(t) {
		typer, ok := v.(schemaTyper)
		if !ok {
			continue
		}
		s := spec.Schema{}
		s.Type = typer.OpenAPISchemaType()
		if f, ok := v.(schemaFormatter); ok {
			s.Format = f.OpenAPISchemaFormat()
		}
		return s, true
	}
	switch t {
	case durationType:
		return typed("string", ""), true
	case fieldsV1Type, rawExtensionType:
		return typed("object", ""), true
	}
	return spec.Schema{}, false
}

// ownDocs describes the types that have no SwaggerDoc method, in
// SwaggerDoc form ("" is the type, other keys are json field names).
var ownDocs = map[reflect.Type]map[string]string{
	reflect.TypeFor[resource.Quantity](): {"": "Quantity is a fixed-point decimal number with an optional suffix: " +
		"a binary SI suffix (Ki, Mi, Gi, Ti, Pi, Ei), a decimal SI suffix (n, u, m, \"\", k, M, G, T, P, E) " +
		"or a decimal exponent (e.g. 1e3). It is written as a string, e.g. \"500m\" or \"1Gi\"; " +
		"numbers are accepted on input."},
	reflect.TypeFor[intstr.IntOrString](): {"": "IntOrString holds either an int32 or a string, written as the bare JSON " +
		"number or string (e.g. 8080 or \"http\", 1 or \"25%\")."},
	reflect.TypeFor[metav1.Time](): {"": "Time is a timestamp written as an RFC 3339 string with second precision, " +
		"in UTC, e.g. \"2024-05-01T12:00:00Z\"."},
	reflect.TypeFor[metav1.MicroTime](): {"": "MicroTime is a timestamp written as an RFC 3339 string with microsecond " +
		"precision, in UTC, e.g. \"2024-05-01T12:00:00.000000Z\"."},
	rawExtensionType: {"": "RawExtension holds an embedded object of any kind, written as the object's own JSON " +
		"with its apiVersion and kind."},
	watchEventType: {
		"":       "WatchEvent is one event of a watch stream.",
		"type":   "The kind of event: ADDED, MODIFIED, DELETED, BOOKMARK or ERROR.",
		"object": "The object the event concerns: its new state for ADDED and MODIFIED, its last state for DELETED, only a resourceVersion for BOOKMARK, a Status for ERROR.",
	},
}

// oneOfForm turns the schema of a type that names OpenAPI v3 alternatives
// (Quantity: string or number; IntOrString: integer or string) into the
// oneOf form Kubernetes publishes in OpenAPI v3.
func oneOfForm(t reflect.Type, s spec.Schema) spec.Schema {
	for _, v := range methodsOf(t) {
		if o, ok := v.(oneOfTyper); ok {
			s.Type = nil
			s.OneOf = nil
			for _, typ := range o.OpenAPIV3OneOfTypes() {
				s.OneOf = append(s.OneOf, typed(typ, ""))
			}
			return s
		}
	}
	return s
}

// addMergeExtensions copies a field's patchStrategy and patchMergeKey tags
// into x-kubernetes-patch-* extensions and guesses the list type of list
// fields from them (a patchMergeKey makes a map keyed by it, a merge
// strategy without key a set; other lists say nothing, atomic being the
// default). The facts of the built-in models (facts.go) replace the guess.
func addMergeExtensions(s *spec.Schema, f reflect.StructField) {
	strategy, mergeKey := f.Tag.Get("patchStrategy"), f.Tag.Get("patchMergeKey")
	if strategy != "" {
		s.AddExtension(extPatchStrategy, strategy)
	}
	if mergeKey != "" {
		s.AddExtension(extPatchMergeKey, mergeKey)
	}
	t := deref(f.Type)
	if t.Kind() != reflect.Slice || t.Elem().Kind() == reflect.Uint8 {
		return
	}
	switch {
	case mergeKey != "":
		s.AddExtension(extListType, "map")
		s.AddExtension(extListMapKeys, []any{mergeKey})
	case strings.Contains(strategy, "merge"):
		s.AddExtension(extListType, "set")
	}
}
