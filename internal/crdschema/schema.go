package crdschema

import (
	"sort"
	"sync"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
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
	// structural is props in apiextensions-apiserver's structural form, as
	// the CEL rule validator and ratcheting read it. Never mutated.
	structural *structuralschema.Structural

	// rules are the compiled x-kubernetes-validations of the whole object
	// (nil when there are none), built on first use; a ruleTree is safe for
	// concurrent use. Its schema adapters cache the children of each node,
	// so they live and die with this Schema (a CRD change compiles a new
	// one).
	rulesOnce sync.Once
	rules     *ruleTree

	// adapted is structural as Kubernetes' CEL value adapters and update
	// correlation read it, each node's children resolved once; built on
	// first use.
	adaptedOnce sync.Once
	adapted     *celSchema
}

// celRoot returns the schema's caching adapter.
func (s *Schema) celRoot() *celSchema {
	s.adaptedOnce.Do(func() { s.adapted = newCelSchema(s.structural) })
	return s.adapted
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
// is pruned (no unknown fields) and valid against its own schema and rules.
// x-kubernetes-validations rules are checked as on a CRD's creation: their
// fields, then (when the schema is structural and its defaults valid) their
// compilation in Kubernetes' CEL environment for new expressions and their
// estimated cost against the per-expression and per-schema limits. A nil
// props is a Required error at fldPath. Errors are sorted by their text, as
// Kubernetes sorts structural errors, so the list is deterministic; the
// errors of rules follow, in the order Kubernetes reports them.
func Compile(props *apiextv1.JSONSchemaProps, fldPath *field.Path) (*Schema, field.ErrorList) {
	return compileWith(props, fldPath, ruleOptions{})
}

// CompileAccepted compiles the schema of a CRD its validation already
// accepted (a stored CRD, about to be served): as Compile, but the
// x-kubernetes-validations rules are not compiled and costed as on a CRD's
// creation. They are compiled when an object is first validated, in the
// environment of stored expressions, as kube-apiserver does when it serves
// a CRD.
func CompileAccepted(props *apiextv1.JSONSchemaProps, fldPath *field.Path) (*Schema, field.ErrorList) {
	return compileWith(props, fldPath, ruleOptions{accepted: true})
}

// compileWith is Compile with the options a CRD update sets for rules.
func compileWith(props *apiextv1.JSONSchemaProps, fldPath *field.Path, opts ruleOptions) (*Schema, field.ErrorList) {
	if props == nil {
		return nil, field.ErrorList{field.Required(fldPath, "")}
	}
	props = props.DeepCopy()
	var errs field.ErrorList
	if props.Nullable {
		errs = append(errs, field.Forbidden(fldPath.Child("nullable"), "nullable cannot be true at the root"))
	}
	structErrs := checkStructural(props, levelRoot, fldPath)
	structErrs = append(structErrs, checkCompleteness(props, fldPath)...)
	var st *structuralschema.Structural
	var initErr *field.Error
	var rules *ruleChecker
	if len(structErrs) == 0 {
		var err error
		if st, err = toStructural(props); err != nil {
			initErr = field.Invalid(fldPath, "", err.Error())
		} else if derrs := checkDefaults(props, st, fldPath); len(derrs) > 0 {
			structErrs = derrs
		} else if !opts.accepted {
			rules = newRuleChecker(opts)
		}
	}
	kctx := keywordContext{root: true}
	if rules != nil {
		kctx.rules = newRootRuleNode(rules, props)
	}
	errs = append(errs, checkKeywords(props, fldPath, kctx)...)
	errs = append(errs, structErrs...)
	if len(errs) == 0 && initErr != nil {
		errs = append(errs, initErr)
	}
	sortErrors(errs)
	if rules != nil {
		// As kube-apiserver lists them: the rules' errors after the
		// schema's, in the order of the walk, then the schema's total.
		errs = append(errs, rules.errs...)
		errs = append(errs, rules.totalErrors(fldPath)...)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return newSchema(props, st), nil
}

// newSchema builds the validator of an already checked schema.
func newSchema(props *apiextv1.JSONSchemaProps, st *structuralschema.Structural) *Schema {
	v := toValidationSchema(props)
	return &Schema{
		props:      props,
		validation: v,
		validator:  validate.NewSchemaValidator(v, nil, "", strfmt.Default),
		structural: st,
	}
}

// sortErrors orders errors by field, keeping the order in which they were
// found within one field (a rule's fieldPath that is blank and so no valid
// path: "must be non-empty" first, as kube-apiserver lists them).
// kube-apiserver walks a schema's properties in map order, so the order
// across fields is its own on each request; sorting makes ours stable.
func sortErrors(errs field.ErrorList) {
	sort.SliceStable(errs, func(i, j int) bool { return errs[i].Field < errs[j].Field })
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
