package crdschema

import (
	"strings"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// sharedParts says which per-version parts of a CRD are identical in every
// version. Kubernetes validates a CRD in its internal form, which keeps
// such parts once at spec level: their errors are reported there
// (spec.validation.openAPIV3Schema, spec.subresources,
// spec.additionalPrinterColumns, spec.selectableFields), once.
type sharedParts struct {
	schema, subresources, columns, selectable bool
}

func sharedVersionParts(versions []apiextv1.CustomResourceDefinitionVersion) sharedParts {
	s := sharedParts{true, true, true, true}
	first := &versions[0]
	for i := range versions[1:] {
		v := &versions[i+1]
		s.schema = s.schema && equality.Semantic.DeepEqual(v.Schema, first.Schema)
		s.subresources = s.subresources && equality.Semantic.DeepEqual(v.Subresources, first.Subresources)
		s.columns = s.columns && equality.Semantic.DeepEqual(v.AdditionalPrinterColumns, first.AdditionalPrinterColumns)
		s.selectable = s.selectable && equality.Semantic.DeepEqual(v.SelectableFields, first.SelectableFields)
	}
	return s
}

// validateVersions checks spec.versions (specPath is spec): names, one
// storage version, and each version's parts, the shared ones once.
func validateVersions(versions []apiextv1.CustomResourceDefinitionVersion, old *apiextv1.CustomResourceDefinition, specPath *field.Path) field.ErrorList {
	p := specPath.Child("versions")
	if len(versions) == 0 {
		return field.ErrorList{field.Required(p, "must have exactly one version marked as storage version")}
	}
	var errs field.ErrorList
	var existing expressions
	if old != nil {
		existing = existingExpressions(old)
	}
	ruleOpts := func(v *apiextv1.CustomResourceDefinitionVersion) ruleOptions {
		return ruleOptions{existing: existing, unchanged: old != nil && schemaUnchanged(v, old)}
	}
	shared := sharedVersionParts(versions)
	storage := 0
	seen := map[string]bool{}
	unique := true
	for i := range versions {
		v := &versions[i]
		if v.Storage {
			storage++
		}
		if seen[v.Name] {
			unique = false
		}
		seen[v.Name] = true
		if msgs := validation.IsDNS1035Label(v.Name); len(msgs) > 0 {
			errs = append(errs, field.Invalid(p.Index(i).Child("name"), v.Name, strings.Join(msgs, ",")))
		}
		errs = append(errs, validateVersion(v, shared, ruleOpts(v), p.Index(i))...)
	}
	if !unique {
		errs = append(errs, field.Invalid(p, versionNames(versions), "must contain unique version names"))
	}
	if storage != 1 {
		errs = append(errs, field.Invalid(p, versionNames(versions), "must have exactly one version marked as storage version"))
	}
	return append(errs, validateSharedParts(versions, shared, ruleOpts(&versions[0]), specPath)...)
}

func versionNames(versions []apiextv1.CustomResourceDefinitionVersion) []string {
	out := make([]string, len(versions))
	for i, v := range versions {
		out[i] = v.Name
	}
	return out
}

// schemaUnchanged reports whether old has version v with the same schema.
func schemaUnchanged(v *apiextv1.CustomResourceDefinitionVersion, old *apiextv1.CustomResourceDefinition) bool {
	for i := range old.Spec.Versions {
		if ov := &old.Spec.Versions[i]; ov.Name == v.Name {
			return equality.Semantic.DeepEqual(v.Schema, ov.Schema)
		}
	}
	return false
}

func versionSchema(v *apiextv1.CustomResourceDefinitionVersion) *apiextv1.JSONSchemaProps {
	if v.Schema == nil {
		return nil
	}
	return v.Schema.OpenAPIV3Schema
}

func hasStatus(sr *apiextv1.CustomResourceSubresources) bool {
	return sr != nil && sr.Status != nil
}

// validateVersion checks the parts of one version that are not shared.
func validateVersion(v *apiextv1.CustomResourceDefinitionVersion, shared sharedParts, opts ruleOptions, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if v.DeprecationWarning != nil {
		switch {
		case !v.Deprecated:
			errs = append(errs, field.Invalid(p.Child("deprecationWarning"), *v.DeprecationWarning, "can only be set for deprecated versions"))
		case len(*v.DeprecationWarning) > 256:
			errs = append(errs, field.Invalid(p.Child("deprecationWarning"), *v.DeprecationWarning, "must be <= 256 characters long"))
		}
	}
	schemaPath := p.Child("schema", "openAPIV3Schema")
	props := versionSchema(v)
	switch {
	case props == nil:
		errs = append(errs, field.Required(schemaPath, ""))
	case !shared.schema:
		errs = append(errs, checkVersionSchema(props, hasStatus(v.Subresources), opts, schemaPath)...)
	}
	if !shared.selectable && len(v.SelectableFields) > 0 {
		if props == nil || shared.schema {
			// The schema is kept at spec level: Kubernetes refuses
			// per-version selectable fields then.
			errs = append(errs, field.Invalid(p.Child("selectableFields"), "", "may only be set when `version.schema.openAPIV3Schema` is not included"))
		} else {
			errs = append(errs, validateSelectableFields(v.SelectableFields, props, p.Child("selectableFields"))...)
		}
	}
	if !shared.subresources {
		errs = append(errs, validateSubresources(v.Subresources, p.Child("subresources"))...)
	}
	if !shared.columns {
		for i := range v.AdditionalPrinterColumns {
			errs = append(errs, validateColumn(&v.AdditionalPrinterColumns[i], p.Child("additionalPrinterColumns").Index(i))...)
		}
	}
	return errs
}

// validateSharedParts checks the parts every version shares, once, at
// spec level (specPath).
func validateSharedParts(versions []apiextv1.CustomResourceDefinitionVersion, shared sharedParts, opts ruleOptions, specPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	first := &versions[0]
	props := versionSchema(first)
	if shared.schema && props != nil {
		anyStatus := false
		for i := range versions {
			anyStatus = anyStatus || hasStatus(versions[i].Subresources)
		}
		errs = append(errs, checkVersionSchema(props, anyStatus, opts, specPath.Child("validation", "openAPIV3Schema"))...)
	}
	if shared.subresources {
		errs = append(errs, validateSubresources(first.Subresources, specPath.Child("subresources"))...)
	}
	if shared.columns {
		for i := range first.AdditionalPrinterColumns {
			errs = append(errs, validateColumn(&first.AdditionalPrinterColumns[i], specPath.Child("additionalPrinterColumns").Index(i))...)
		}
	}
	if shared.selectable && len(first.SelectableFields) > 0 {
		if !shared.schema || props == nil {
			errs = append(errs, field.Invalid(specPath.Child("selectableFields"), "", "may only be set when validations.schema is included"))
		} else {
			errs = append(errs, validateSelectableFields(first.SelectableFields, props, specPath.Child("selectableFields"))...)
		}
	}
	return errs
}

// checkVersionSchema checks one schema at p: the root restrictions of the
// status subresource when status is on, then Compile's checks.
func checkVersionSchema(props *apiextv1.JSONSchemaProps, status bool, opts ruleOptions, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if status {
		errs = append(errs, validateStatusRoot(props, p)...)
	}
	_, serrs := compileWith(props, p, opts)
	return append(errs, serrs...)
}

// internalSchemaValue is a schema as Kubernetes prints it in error values
// (its internal form, JSON with Go field names); name when it does not
// convert.
func internalSchemaValue(props *apiextv1.JSONSchemaProps, name string) any {
	internal, err := toInternal(props)
	if err != nil {
		return name
	}
	return *internal
}
