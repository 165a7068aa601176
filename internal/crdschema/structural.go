package crdschema

import (
	"fmt"
	"reflect"
	"regexp"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// level is where a structural node sits: it decides the message of a
// missing type and whether additionalProperties is allowed.
type level int

const (
	levelRoot level = iota
	levelItems
	levelField
)

// The two anyOf alternatives x-kubernetes-int-or-string may spell out.
var intOrStringAnyOf = []apiextv1.JSONSchemaProps{{Type: "integer"}, {Type: "string"}}

func isIntOrStringAnyOf(anyOf []apiextv1.JSONSchemaProps) bool {
	return reflect.DeepEqual(anyOf, intOrStringAnyOf)
}

// checkStructural checks the structural invariants of a node reached through
// properties, additionalProperties and items only: every such node names its
// type (unless x-kubernetes-int-or-string or preserve-unknown-fields), arrays
// have items, embedded resources are objects, the root is an object without
// additionalProperties, and the root metadata only restricts name and
// generateName. Value validations (allOf, anyOf, oneOf, not) are checked by
// checkNested: they may not introduce structure.
func checkStructural(s *apiextv1.JSONSchemaProps, lvl level, p *field.Path) field.ErrorList {
	if s == nil {
		return nil
	}
	var errs field.ErrorList
	if s.Type == "array" && s.Items == nil {
		errs = append(errs, field.Required(p.Child("items"), "must be specified"))
	}
	errs = append(errs, checkStructural(itemsSchema(s), levelItems, p.Child("items"))...)
	for _, name := range sortedKeys(s.Properties) {
		prop := s.Properties[name]
		errs = append(errs, checkStructural(&prop, levelField, p.Child("properties").Key(name))...)
	}
	if s.AdditionalProperties != nil {
		if lvl == levelRoot {
			errs = append(errs, field.Forbidden(p.Child("additionalProperties"), "must not be used at the root"))
		}
		if s.XEmbeddedResource {
			errs = append(errs, field.Forbidden(p.Child("additionalProperties"), "must not be used if x-kubernetes-embedded-resource is set"))
		}
		errs = append(errs, checkStructural(s.AdditionalProperties.Schema, levelField, p.Child("additionalProperties"))...)
	}

	if s.XIntOrString && preserveUnknown(s) {
		errs = append(errs, field.Invalid(p.Child("x-kubernetes-preserve-unknown-fields"), true, "must be false if x-kubernetes-int-or-string is true"))
	}
	if s.XIntOrString && s.XEmbeddedResource {
		errs = append(errs, field.Invalid(p.Child("x-kubernetes-embedded-resource"), true, "must be false if x-kubernetes-int-or-string is true"))
	}
	errs = append(errs, checkJunctors(s, p)...)

	switch {
	case s.XEmbeddedResource && s.Type == "":
		errs = append(errs, field.Required(p.Child("type"), "must be object if x-kubernetes-embedded-resource is true"))
	case s.XEmbeddedResource && s.Type != "object":
		errs = append(errs, field.Invalid(p.Child("type"), s.Type, "must be object if x-kubernetes-embedded-resource is true"))
	case s.Type == "" && !s.XIntOrString && !preserveUnknown(s):
		errs = append(errs, field.Required(p.Child("type"), missingTypeDetail[lvl]))
	}
	if lvl == levelRoot && s.Type != "" && s.Type != "object" {
		errs = append(errs, field.Invalid(p.Child("type"), s.Type, "must be object at the root"))
	}
	if s.XEmbeddedResource && !preserveUnknown(s) && len(s.Properties) == 0 {
		errs = append(errs, field.Required(p.Child("properties"), "must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields"))
	}
	errs = append(errs, checkTypeMeta(s, lvl == levelRoot || s.XEmbeddedResource, lvl, p)...)
	return errs
}

var missingTypeDetail = map[level]string{
	levelRoot:  "must not be empty at the root",
	levelItems: "must not be empty for specified array items",
	levelField: "must not be empty for specified object fields",
}

// checkJunctors checks the value validations hanging off a structural node.
// anyOf [{type: integer}, {type: string}] (directly, or as the first allOf
// entry) is the one allowed spelling of int-or-string that names types.
func checkJunctors(s *apiextv1.JSONSchemaProps, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.Pattern != "" {
		if _, err := regexp.Compile(s.Pattern); err != nil {
			errs = append(errs, field.Invalid(p.Child("pattern"), s.Pattern, fmt.Sprintf("must be a valid regular expression, but isn't: %v", err)))
		}
	}
	if !isIntOrStringAnyOf(s.AnyOf) {
		for i := range s.AnyOf {
			errs = append(errs, checkNested(&s.AnyOf[i], false, p.Child("anyOf").Index(i))...)
		}
	}
	skipFirst := len(s.AllOf) > 0 && isIntOrStringAnyOf(s.AllOf[0].AnyOf)
	for i := range s.AllOf {
		errs = append(errs, checkNested(&s.AllOf[i], skipFirst && i == 0, p.Child("allOf").Index(i))...)
	}
	for i := range s.OneOf {
		errs = append(errs, checkNested(&s.OneOf[i], false, p.Child("oneOf").Index(i))...)
	}
	errs = append(errs, checkNested(s.Not, false, p.Child("not"))...)
	return errs
}

// checkNested checks a schema under allOf, anyOf, oneOf or not: it may only
// carry value validations, never structure (type, additionalProperties,
// nullable, defaults, descriptions, Kubernetes extensions, metadata).
func checkNested(s *apiextv1.JSONSchemaProps, skipAnyOf bool, p *field.Path) field.ErrorList {
	if s == nil {
		return nil
	}
	var errs field.ErrorList
	if s.Pattern != "" {
		if _, err := regexp.Compile(s.Pattern); err != nil {
			errs = append(errs, field.Invalid(p.Child("pattern"), s.Pattern, fmt.Sprintf("must be a valid regular expression, but isn't: %v", err)))
		}
	}
	if !skipAnyOf {
		for i := range s.AnyOf {
			errs = append(errs, checkNested(&s.AnyOf[i], false, p.Child("anyOf").Index(i))...)
		}
	}
	for i := range s.AllOf {
		errs = append(errs, checkNested(&s.AllOf[i], false, p.Child("allOf").Index(i))...)
	}
	for i := range s.OneOf {
		errs = append(errs, checkNested(&s.OneOf[i], false, p.Child("oneOf").Index(i))...)
	}
	errs = append(errs, checkNested(s.Not, false, p.Child("not"))...)
	errs = append(errs, checkNested(itemsSchema(s), false, p.Child("items"))...)
	for _, name := range sortedKeys(s.Properties) {
		prop := s.Properties[name]
		errs = append(errs, checkNested(&prop, false, p.Child("properties").Key(name))...)
	}
	for _, f := range nestedForbidden(s) {
		errs = append(errs, field.Forbidden(p.Child(f.name), f.detail))
	}
	if _, ok := s.Properties["metadata"]; ok {
		errs = append(errs, field.Forbidden(p.Child("properties").Key("metadata"), "must not be specified in a nested context"))
	}
	return errs
}

type forbiddenKeyword struct{ name, detail string }

// nestedForbidden lists the structural keywords set on a nested schema.
func nestedForbidden(s *apiextv1.JSONSchemaProps) []forbiddenKeyword {
	var out []forbiddenKeyword
	add := func(set bool, name, detail string) {
		if set {
			out = append(out, forbiddenKeyword{name, detail})
		}
	}
	add(s.Type != "", "type", "must be empty to be structural")
	add(s.AdditionalProperties != nil, "additionalProperties", "must be undefined to be structural")
	add(s.Default != nil, "default", "must be undefined to be structural")
	add(s.Title != "", "title", "must be empty to be structural")
	add(s.Description != "", "description", "must be empty to be structural")
	add(s.Nullable, "nullable", "must be false to be structural")
	add(preserveUnknown(s), "x-kubernetes-preserve-unknown-fields", "must be false to be structural")
	add(s.XEmbeddedResource, "x-kubernetes-embedded-resource", "must be false to be structural")
	add(s.XIntOrString, "x-kubernetes-int-or-string", "must be false to be structural")
	add(len(s.XListMapKeys) > 0, "x-kubernetes-list-map-keys", "must be empty to be structural")
	add(s.XListType != nil, "x-kubernetes-list-type", "must be undefined to be structural")
	add(s.XMapType != nil, "x-kubernetes-map-type", "must be undefined to be structural")
	return out
}

// checkTypeMeta checks apiVersion, kind and metadata where they mean the
// object's TypeMeta and ObjectMeta (the root and embedded resources).
func checkTypeMeta(s *apiextv1.JSONSchemaProps, isResource bool, lvl level, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	props := p.Child("properties")
	if isResource {
		for _, name := range []string{"apiVersion", "kind"} {
			if prop, ok := s.Properties[name]; ok && prop.Type != "string" {
				errs = append(errs, field.Invalid(props.Key(name).Child("type"), prop.Type, "must be string"))
			}
		}
	}
	meta, ok := s.Properties["metadata"]
	if !ok {
		return errs
	}
	if isResource && meta.Type != "object" {
		errs = append(errs, field.Invalid(props.Key("metadata").Child("type"), meta.Type, "must be object"))
	}
	if lvl == levelRoot && !onlyNameRestrictions(meta) {
		errs = append(errs, field.Forbidden(props.Key("metadata"), "must not specify anything other than name and generateName, but metadata is implicitly specified"))
	}
	return errs
}

// onlyNameRestrictions reports whether a root metadata schema says nothing
// besides its type and the schemas of name and generateName.
func onlyNameRestrictions(meta apiextv1.JSONSchemaProps) bool {
	rest := meta
	rest.Type = ""
	rest.Default = nil
	if len(rest.Properties) > 0 {
		for k := range rest.Properties {
			if k != "name" && k != "generateName" {
				return false
			}
		}
		rest.Properties = nil
	}
	return reflect.DeepEqual(rest, apiextv1.JSONSchemaProps{})
}

// checkCompleteness requires every property or items schema named inside the
// root's value validations to exist in the structural part of the schema, so
// that no validation applies to a value the schema would prune. Like
// Kubernetes, this looks at the root's junctors only.
func checkCompleteness(root *apiextv1.JSONSchemaProps, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	visit := func(v *apiextv1.JSONSchemaProps, vPath *field.Path) {
		errs = append(errs, nestedCompleteness(v, root, p, vPath)...)
	}
	junctors(root, p, visit)
	return errs
}

// junctors calls visit for each allOf, anyOf, oneOf and not schema of v.
func junctors(v *apiextv1.JSONSchemaProps, vPath *field.Path, visit func(*apiextv1.JSONSchemaProps, *field.Path)) {
	if v.Not != nil {
		visit(v.Not, vPath.Child("not"))
	}
	for i := range v.AllOf {
		visit(&v.AllOf[i], vPath.Child("allOf").Index(i))
	}
	for i := range v.AnyOf {
		visit(&v.AnyOf[i], vPath.Child("anyOf").Index(i))
	}
	for i := range v.OneOf {
		visit(&v.OneOf[i], vPath.Child("oneOf").Index(i))
	}
}

func nestedCompleteness(v, s *apiextv1.JSONSchemaProps, sPath, vPath *field.Path) field.ErrorList {
	if v == nil {
		return nil
	}
	if s == nil {
		return field.ErrorList{field.Required(sPath, fmt.Sprintf("because it is defined in %s", vPath.String()))}
	}
	var errs field.ErrorList
	junctors(v, vPath, func(sub *apiextv1.JSONSchemaProps, subPath *field.Path) {
		errs = append(errs, nestedCompleteness(sub, s, sPath, subPath)...)
	})
	errs = append(errs, nestedCompleteness(itemsSchema(v), itemsSchema(s), sPath.Child("items"), vPath.Child("items"))...)
	for _, k := range sortedKeys(v.Properties) {
		vProp := v.Properties[k]
		sProp, ok := s.Properties[k]
		if !ok {
			errs = append(errs, field.Required(sPath.Child("properties").Key(k), fmt.Sprintf("because it is defined in %s", vPath.Child("properties").Key(k))))
			continue
		}
		errs = append(errs, nestedCompleteness(&vProp, &sProp, sPath.Child("properties").Key(k), vPath.Child("properties").Key(k))...)
	}
	return errs
}
