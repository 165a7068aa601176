package admissionregistration

import (
	"slices"
	"strings"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func isFullyQualifiedName(p *field.Path, name string) field.ErrorList {
	return validation.IsFullyQualifiedName(p, name)
}

func joinComma(s []string) string { return strings.Join(s, ", ") }

func containsString(s []string, v string) bool { return slices.Contains(s, v) }

// anyOf reports whether some of values is in allowed.
func anyOf(values, allowed []string) bool {
	return slices.ContainsFunc(values, func(v string) bool { return slices.Contains(allowed, v) })
}

func semanticEqual(a, b any) bool { return apiequality.Semantic.DeepEqual(a, b) }
