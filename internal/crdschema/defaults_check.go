package crdschema

import (
	"reflect"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
	"k8s.io/kube-openapi/pkg/validation/validate"
)

// checkDefaults requires every default reachable through properties and
// items to be valid JSON, pruned (no field its schema does not specify) and
// valid against its own schema, as Kubernetes requires for v1 CRDs. Defaults
// inside the apiVersion, kind or metadata of an embedded resource are only
// validated, not pruning-checked (Kubernetes coerces them as ObjectMeta).
func checkDefaults(s, root *apiextv1.JSONSchemaProps, p *field.Path) field.ErrorList {
	return defaultsWalk(s, p, s == root, false)
}

func defaultsWalk(s *apiextv1.JSONSchemaProps, p *field.Path, isRoot, insideMeta bool) field.ErrorList {
	if s == nil {
		return nil
	}
	if s.XEmbeddedResource {
		insideMeta = false
	}
	var errs field.ErrorList
	if s.Default != nil {
		errs = append(errs, checkOneDefault(s, p, isRoot, insideMeta)...)
	}
	errs = append(errs, defaultsWalk(itemsSchema(s), p.Child("items"), false, insideMeta)...)
	for _, k := range sortedKeys(s.Properties) {
		prop := s.Properties[k]
		sub := insideMeta
		if s.XEmbeddedResource && isMetaField(k) {
			sub = true
		}
		errs = append(errs, defaultsWalk(&prop, p.Child("properties").Key(k), false, sub)...)
	}
	return errs
}

func checkOneDefault(s *apiextv1.JSONSchemaProps, p *field.Path, isRoot, insideMeta bool) field.ErrorList {
	dp := p.Child("default")
	var value any
	if err := unmarshalJSON(s.Default.Raw, &value); err != nil {
		return field.ErrorList{field.Invalid(dp, string(s.Default.Raw), "must be valid JSON: "+err.Error())}
	}
	var errs field.ErrorList
	if !insideMeta {
		pruned := defaultValue(s.Default)
		node := *s
		if isRoot {
			node.XEmbeddedResource = true
		}
		pr := pruner{}
		pr.value(pruned, &node)
		if !reflect.DeepEqual(pruned, defaultValue(s.Default)) {
			errs = append(errs, field.Invalid(dp, value, "must not have unknown fields"))
		}
	}
	v := validate.NewSchemaValidator(toValidationSchema(s), nil, "", strfmt.Default)
	errs = append(errs, resultToFieldErrors(dp, v.Validate(defaultValue(s.Default)))...)
	errs = append(errs, validateListTypes(dp, s, defaultValue(s.Default))...)
	return errs
}
