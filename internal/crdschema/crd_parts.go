package crdschema

import (
	"fmt"
	"strings"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var (
	columnTypes   = []string{"boolean", "date", "integer", "number", "string"}
	columnFormats = []string{"byte", "date", "date-time", "double", "float", "int32", "int64", "password"}
)

// maxSelectableFields is Kubernetes' limit on selectableFields per version.
const maxSelectableFields = 8

// validateNames checks the names of spec.names or status.acceptedNames;
// empty names are not errors here (spec requires them separately).
func validateNames(n *apiextv1.CustomResourceDefinitionNames, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	label := func(value, name string, mixedCase bool) {
		if value == "" {
			return
		}
		check := value
		prefix := ""
		if mixedCase {
			check, prefix = strings.ToLower(value), "may have mixed case, but should otherwise match: "
		}
		if msgs := validation.IsDNS1035Label(check); len(msgs) > 0 {
			errs = append(errs, field.Invalid(p.Child(name), value, prefix+strings.Join(msgs, ",")))
		}
	}
	label(n.Plural, "plural", false)
	label(n.Singular, "singular", false)
	label(n.Kind, "kind", true)
	label(n.ListKind, "listKind", true)
	for i, s := range n.ShortNames {
		if msgs := validation.IsDNS1035Label(s); len(msgs) > 0 {
			errs = append(errs, field.Invalid(p.Child("shortNames").Index(i), s, strings.Join(msgs, ",")))
		}
	}
	if n.Kind != "" && n.Kind == n.ListKind {
		errs = append(errs, field.Invalid(p.Child("listKind"), n.ListKind, "kind and listKind may not be the same"))
	}
	for i, c := range n.Categories {
		if msgs := validation.IsDNS1035Label(c); len(msgs) > 0 {
			errs = append(errs, field.Invalid(p.Child("categories").Index(i), c, strings.Join(msgs, ",")))
		}
	}
	return errs
}

// validateStoredVersions requires the storage version to be recorded and
// every recorded version to still be in spec.versions.
func validateStoredVersions(stored []string, versions []apiextv1.CustomResourceDefinitionVersion, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	inSpec := map[string]bool{}
	for _, v := range versions {
		inSpec[v.Name] = true
		if v.Storage && !contains(stored, v.Name) {
			errs = append(errs, field.Invalid(p, stored, "must have the storage version "+v.Name))
		}
	}
	for i, v := range stored {
		if !inSpec[v] {
			errs = append(errs, field.Invalid(p.Index(i), v, fmt.Sprintf("missing from spec.versions; %[1]s was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in %[1]s and removes %[1]s from status.storedVersions", v)))
		}
	}
	return errs
}

func validateSubresources(sr *apiextv1.CustomResourceSubresources, p *field.Path) field.ErrorList {
	if sr == nil || sr.Scale == nil {
		return nil
	}
	scale := sr.Scale
	var errs field.ErrorList
	scalePath := func(value, name, under string, prefixes ...string) {
		fp := p.Child("scale", name)
		if value == "" {
			errs = append(errs, field.Required(fp, ""))
			return
		}
		if perrs := validateSimpleJSONPath(value, fp); len(perrs) > 0 {
			errs = append(errs, perrs...)
			return
		}
		for _, prefix := range prefixes {
			if strings.HasPrefix(value, prefix) {
				return
			}
		}
		errs = append(errs, field.Invalid(fp, value, "should be a json path under "+under))
	}
	scalePath(scale.SpecReplicasPath, "specReplicasPath", ".spec", ".spec.")
	scalePath(scale.StatusReplicasPath, "statusReplicasPath", ".status", ".status.")
	if scale.LabelSelectorPath != nil && *scale.LabelSelectorPath != "" {
		scalePath(*scale.LabelSelectorPath, "labelSelectorPath", "either .spec or .status", ".spec.", ".status.")
	}
	return errs
}

// validateSimpleJSONPath requires a dot-notation path starting with ".".
func validateSimpleJSONPath(s string, p *field.Path) field.ErrorList {
	switch {
	case s == "":
		return field.ErrorList{field.Invalid(p, s, "must not be empty")}
	case s[0] != '.':
		return field.ErrorList{field.Invalid(p, s, "must be a simple json path starting with .")}
	}
	return nil
}

// validateColumn checks one additionalPrinterColumn. Beyond Kubernetes'
// checks, the jsonPath must parse with this package's evaluator (Kubernetes
// silently falls back to the default columns when it does not parse).
func validateColumn(c *apiextv1.CustomResourceColumnDefinition, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if c.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	}
	switch {
	case c.Type == "":
		errs = append(errs, field.Required(p.Child("type"), "must be one of "+strings.Join(columnTypes, ",")))
	case !contains(columnTypes, c.Type):
		errs = append(errs, field.Invalid(p.Child("type"), c.Type, "must be one of "+strings.Join(columnTypes, ",")))
	}
	if c.Format != "" && !contains(columnFormats, c.Format) {
		errs = append(errs, field.Invalid(p.Child("format"), c.Format, "must be one of "+strings.Join(columnFormats, ",")))
	}
	jp := p.Child("jsonPath")
	if c.JSONPath == "" {
		return append(errs, field.Required(jp, ""))
	}
	if perrs := validateSimpleJSONPath(c.JSONPath, jp); len(perrs) > 0 {
		return append(errs, perrs...)
	}
	if _, err := parseJSONPath(c.JSONPath); err != nil {
		errs = append(errs, field.Invalid(jp, c.JSONPath, err.Error()))
	}
	return errs
}

// validateSelectableFields checks selectableFields: each a dotted path to a
// string, boolean or integer field of the schema, outside metadata, unique,
// at most eight.
func validateSelectableFields(fields []apiextv1.SelectableField, props *apiextv1.JSONSchemaProps, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, f := range fields {
		fp := p.Index(i).Child("jsonPath")
		if f.JSONPath == "" {
			errs = append(errs, field.Required(fp, ""))
			continue
		}
		target, err := schemaAt(props, f.JSONPath)
		if err != nil {
			errs = append(errs, field.Invalid(fp, f.JSONPath, "is an invalid path: "+err.Error()))
			continue
		}
		if strings.HasPrefix(f.JSONPath, ".metadata.") || f.JSONPath == ".metadata" {
			errs = append(errs, field.Invalid(fp, f.JSONPath, "must not point to fields in metadata"))
		}
		if target.Type != "string" && target.Type != "boolean" && target.Type != "integer" {
			errs = append(errs, field.Invalid(fp, f.JSONPath, "must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed."))
		}
		if seen[f.JSONPath] {
			errs = append(errs, field.Duplicate(fp, f.JSONPath))
		}
		seen[f.JSONPath] = true
	}
	if len(seen) > maxSelectableFields {
		errs = append(errs, field.TooMany(p, len(seen), maxSelectableFields))
	}
	return errs
}

// schemaAt follows a ".a.b" path through properties and additionalProperties.
func schemaAt(s *apiextv1.JSONSchemaProps, path string) (*apiextv1.JSONSchemaProps, error) {
	if !strings.HasPrefix(path, ".") || path == "." {
		return nil, fmt.Errorf("must be a dotted path starting with '.'")
	}
	for _, part := range strings.Split(path[1:], ".") {
		if part == "" {
			return nil, fmt.Errorf("empty path element")
		}
		next, ok := childSchema(s, part)
		if !ok || next == nil {
			return nil, fmt.Errorf("does not refer to a valid field")
		}
		s = next
	}
	return s, nil
}
