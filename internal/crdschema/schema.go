package crdschema

import (
	"sort"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
	"k8s.io/kube-openapi/pkg/validation/validate"
)

// Schema is one compiled version schema of a CRD (spec.versions[i].schema.openAPIV3Schema).
type Schema struct {
	// props is a deep copy of the schema Compile accepted: structural, every
	// default pruned and valid. Never mutated after Compile.
	props *apiextv1.JSONSchemaProps
	// validation is props in the form kube-openapi's validator reads
	// (x-kubernetes-int-or-string as type [integer, string], formats
	// Kubernetes does not support stripped). Never mutated after Compile.
	validation *spec.Schema
	// validator validates whole objects against validation; kube-openapi's
	// SchemaValidator is safe for concurrent use.
	validator *validate.SchemaValidator
}

// Compile checks props is structural (as Kubernetes requires for apiextensions.k8s.io/v1) and compiles it.
// Errors are field errors under fldPath (e.g. spec.versions[0].schema.openAPIV3Schema.properties[spec].type: Required value).
//
// Besides structurality, Compile applies the schema rules of Kubernetes' CRD
// validation: only OpenAPI v3 types; no id, $ref, definitions,
// patternProperties, dependencies, additionalItems, items arrays, type null or
// uniqueItems; properties and additionalProperties are exclusive;
// x-kubernetes-preserve-unknown-fields is true or absent; list-type, list-map-keys
// and map-type are consistent; no nullable and no additionalProperties at the
// root; no defaults inside the root apiVersion, kind and metadata; every default
// is pruned (no unknown fields) and valid against its own schema. A nil props
// is a Required error at fldPath. x-kubernetes-validations (CEL) is rejected as
// unsupported. Errors are sorted by their text, as Kubernetes sorts structural
// errors, so the list is deterministic.
func Compile(props *apiextv1.JSONSchemaProps, fldPath *field.Path) (*Schema, field.ErrorList) {
	if props == nil {
		return nil, field.ErrorList{field.Required(fldPath, "")}
	}
	props = props.DeepCopy()
	var errs field.ErrorList
	if props.Nullable {
		errs = append(errs, field.Forbidden(fldPath.Child("nullable"), "nullable cannot be true at the root"))
	}
	errs = append(errs, checkKeywords(props, fldPath, keywordContext{root: true})...)
	errs = append(errs, checkStructural(props, levelRoot, fldPath)...)
	errs = append(errs, checkCompleteness(props, fldPath)...)
	sortErrors(errs)
	if len(errs) > 0 {
		return nil, errs
	}
	s := newSchema(props)
	if derrs := checkDefaults(props, props, fldPath); len(derrs) > 0 {
		sortErrors(derrs)
		return nil, derrs
	}
	return s, nil
}

// newSchema builds the validator of an already checked schema.
func newSchema(props *apiextv1.JSONSchemaProps) *Schema {
	v := toValidationSchema(props)
	return &Schema{
		props:      props,
		validation: v,
		validator:  validate.NewSchemaValidator(v, nil, "", strfmt.Default),
	}
}

func sortErrors(errs field.ErrorList) {
	sort.SliceStable(errs, func(i, j int) bool { return errs[i].Error() < errs[j].Error() })
}

// sortedKeys returns the keys of a schema map in order, so that walks (and
// the errors they report) are deterministic.
func sortedKeys(m map[string]apiextv1.JSONSchemaProps) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// preserveUnknown reports x-kubernetes-preserve-unknown-fields: true.
func preserveUnknown(s *apiextv1.JSONSchemaProps) bool {
	return s != nil && s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields
}

// additionalSchema returns the schema of additionalProperties values and
// whether additionalProperties is set at all (true, false or a schema). A
// set additionalProperties without a schema has a nil schema: values are
// kept but their contents are pruned, as Kubernetes does.
func additionalSchema(s *apiextv1.JSONSchemaProps) (*apiextv1.JSONSchemaProps, bool) {
	if s == nil || s.AdditionalProperties == nil {
		return nil, false
	}
	return s.AdditionalProperties.Schema, true
}

// itemsSchema returns the single items schema, or nil.
func itemsSchema(s *apiextv1.JSONSchemaProps) *apiextv1.JSONSchemaProps {
	if s == nil || s.Items == nil {
		return nil
	}
	return s.Items.Schema
}
