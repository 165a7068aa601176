package crdschema

import (
	"strings"
	"testing"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"
)

// props parses a YAML openAPIV3Schema.
func props(t testing.TB, y string) *apiextv1.JSONSchemaProps {
	t.Helper()
	var p apiextv1.JSONSchemaProps
	if err := yaml.UnmarshalStrict([]byte(y), &p); err != nil {
		t.Fatalf("schema YAML: %v", err)
	}
	return &p
}

// compile parses and compiles a schema that must be valid.
func compile(t testing.TB, y string) *Schema {
	t.Helper()
	s, errs := Compile(props(t, y), field.NewPath("schema"))
	if len(errs) > 0 {
		t.Fatalf("Compile: %v", errs)
	}
	return s
}

// object decodes JSON as apimachinery does (integers become int64).
func object(t testing.TB, j string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := utiljson.Unmarshal([]byte(j), &m); err != nil {
		t.Fatalf("object JSON: %v", err)
	}
	return m
}

func errorStrings(errs field.ErrorList) []string {
	out := make([]string, len(errs))
	for i, e := range errs {
		out[i] = e.Error()
	}
	return out
}

func joined(errs field.ErrorList) string { return strings.Join(errorStrings(errs), "\n") }
