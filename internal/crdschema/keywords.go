package crdschema

import (
	"fmt"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// openAPITypes are the types a CRD schema may name.
var openAPITypes = []string{"array", "boolean", "integer", "number", "object", "string"}

// keywordContext carries what the position of a schema node forbids.
type keywordContext struct {
	// root is true for the schema of the whole object only.
	root bool
	// insideMeta is true under the apiVersion, kind or metadata of the root
	// or of an embedded resource.
	insideMeta bool
	// noDefaults, when non-empty, forbids defaults and says why.
	noDefaults string
	// rules is the node's place in the check of x-kubernetes-validations
	// rules; nil when rules are not compiled here (a schema with structural
	// or default errors, and anything under allOf, anyOf, oneOf or not).
	rules *ruleNode
	// oldSelfForbidden is the outermost path above whose values cannot be
	// correlated with their old values (items of a list that is not a
	// list-type map, properties of a map that is neither granular nor
	// atomic): transition rules are refused below it.
	oldSelfForbidden *field.Path
}

// checkKeywords applies Kubernetes' keyword rules for CRD schemas to s and
// every schema below it (properties, additionalProperties, items, allOf,
// anyOf, oneOf, not), the fields of x-kubernetes-validations rules
// included. Where ctx.rules is set and nothing is wrong with a node or the
// schemas below it, the node's rules are compiled too; their errors go to
// the rule checker, not to the returned list.
func checkKeywords(s *apiextv1.JSONSchemaProps, p *field.Path, ctx keywordContext) field.ErrorList {
	if s == nil {
		return nil
	}
	errs := checkNodeKeywords(s, p, ctx)
	errs = append(errs, checkListAndMapTypes(s, p)...)
	errs = append(errs, checkChildKeywords(s, p, ctx)...)
	if len(s.XValidations) == 0 {
		return errs
	}
	errs = append(errs, checkRuleFields(s, p)...)
	if len(errs) == 0 && ctx.rules != nil {
		ctx.rules.checker.compile(ctx.rules, s, p, ctx.oldSelfForbidden)
	}
	return errs
}

// forbidOldSelf returns ctx with transition rules refused below p, unless
// they already are (the outermost path is kept).
func (ctx keywordContext) forbidOldSelf(p *field.Path) keywordContext {
	if ctx.oldSelfForbidden == nil {
		ctx.oldSelfForbidden = p
	}
	return ctx
}

// checkChildKeywords runs checkKeywords on the schemas below s.
func checkChildKeywords(s *apiextv1.JSONSchemaProps, p *field.Path, ctx keywordContext) field.ErrorList {
	var errs field.ErrorList
	child := keywordContext{insideMeta: ctx.insideMeta, noDefaults: ctx.noDefaults, oldSelfForbidden: ctx.oldSelfForbidden}
	if s.AdditionalProperties != nil {
		if len(s.Properties) != 0 && (!s.AdditionalProperties.Allows || s.AdditionalProperties.Schema != nil) {
			errs = append(errs, field.Forbidden(p.Child("additionalProperties"), "additionalProperties and properties are mutual exclusive"))
		}
		apCtx := child
		apCtx.rules = ctx.rules.additional(s.AdditionalProperties.Schema)
		if ctx.insideMeta {
			apCtx.noDefaults = "inside additionalProperties applying to object metadata"
		}
		errs = append(errs, checkKeywords(s.AdditionalProperties.Schema, p.Child("additionalProperties"), apCtx)...)
	}
	for _, name := range sortedKeys(s.Properties) {
		prop := s.Properties[name]
		propCtx := child
		propCtx.rules = ctx.rules.property(&prop, name)
		if !cel.MapIsCorrelatable(s.XMapType) {
			propCtx = propCtx.forbidOldSelf(p)
		}
		if (ctx.root || s.XEmbeddedResource) && isMetaField(name) {
			propCtx.insideMeta = true
			if ctx.root {
				propCtx.noDefaults = "in top-level " + name
			}
		}
		errs = append(errs, checkKeywords(&prop, p.Child("properties").Key(name), propCtx)...)
	}
	if s.Items != nil {
		itemsCtx := child
		if s.XListType == nil || *s.XListType != "map" {
			itemsCtx = itemsCtx.forbidOldSelf(p)
		}
		itemsCtx.rules = ctx.rules.items(s.Items.Schema)
		errs = append(errs, checkKeywords(s.Items.Schema, p.Child("items"), itemsCtx)...)
		for i := range s.Items.JSONSchemas {
			itemsCtx.rules = ctx.rules.items(&s.Items.JSONSchemas[i])
			errs = append(errs, checkKeywords(&s.Items.JSONSchemas[i], p.Child("items").Index(i), itemsCtx)...)
		}
	}
	errs = append(errs, checkKeywords(s.Not, p.Child("not"), child)...)
	for i := range s.AllOf {
		errs = append(errs, checkKeywords(&s.AllOf[i], p.Child("allOf").Index(i), child)...)
	}
	for i := range s.OneOf {
		errs = append(errs, checkKeywords(&s.OneOf[i], p.Child("oneOf").Index(i), child)...)
	}
	for i := range s.AnyOf {
		errs = append(errs, checkKeywords(&s.AnyOf[i], p.Child("anyOf").Index(i), child)...)
	}
	return errs
}

func isMetaField(name string) bool {
	return name == "apiVersion" || name == "kind" || name == "metadata"
}

// checkNodeKeywords checks the keywords of one node, not its children.
func checkNodeKeywords(s *apiextv1.JSONSchemaProps, p *field.Path, ctx keywordContext) field.ErrorList {
	var errs field.ErrorList
	if s.Type != "" && !contains(openAPITypes, s.Type) {
		if s.Type == "null" {
			errs = append(errs, field.Forbidden(p.Child("type"), "type cannot be set to null, use nullable as an alternative"))
		} else {
			errs = append(errs, field.NotSupported(p.Child("type"), s.Type, openAPITypes))
		}
	}
	if s.Default != nil && ctx.noDefaults != "" {
		errs = append(errs, field.Forbidden(p.Child("default"), "must not be set "+ctx.noDefaults))
	}
	forbidden := []struct {
		set  bool
		name string
	}{
		{s.ID != "", "id"},
		{s.Schema != "", "$schema"},
		{s.AdditionalItems != nil, "additionalItems"},
		{len(s.PatternProperties) != 0, "patternProperties"},
		{len(s.Definitions) != 0, "definitions"},
		{s.Dependencies != nil, "dependencies"},
		{s.Ref != nil, "$ref"},
	}
	for _, f := range forbidden {
		if f.set {
			errs = append(errs, field.Forbidden(p.Child(f.name), f.name+" is not supported"))
		}
	}
	if s.Items != nil && len(s.Items.JSONSchemas) != 0 {
		errs = append(errs, field.Forbidden(p.Child("items"), "items must be a schema object and not an array"))
	}
	if ctx.insideMeta && s.XEmbeddedResource {
		errs = append(errs, field.Forbidden(p.Child("x-kubernetes-embedded-resource"), "must not be used inside of resource meta"))
	}
	if s.UniqueItems {
		errs = append(errs, field.Forbidden(p.Child("uniqueItems"), "uniqueItems cannot be set to true since the runtime complexity becomes quadratic"))
	}
	if s.XPreserveUnknownFields != nil && !*s.XPreserveUnknownFields {
		errs = append(errs, field.Invalid(p.Child("x-kubernetes-preserve-unknown-fields"), false, "must be true or undefined"))
	}
	return errs
}

// checkListAndMapTypes checks x-kubernetes-list-type, x-kubernetes-list-map-keys
// and x-kubernetes-map-type on one node.
func checkListAndMapTypes(s *apiextv1.JSONSchemaProps, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.XMapType != nil {
		errs = append(errs, requireType(s, "object", "x-kubernetes-map-type", p)...)
		if *s.XMapType != "atomic" && *s.XMapType != "granular" {
			errs = append(errs, field.NotSupported(p.Child("x-kubernetes-map-type"), *s.XMapType, []string{"atomic", "granular"}))
		}
	}
	items := itemsSchema(s)
	if s.XListType != nil {
		if typeErrs := requireType(s, "array", "x-kubernetes-list-type", p); len(typeErrs) > 0 {
			errs = append(errs, typeErrs...)
		} else if *s.XListType == "set" && items != nil {
			errs = append(errs, checkSetItemsAtomic(items, p.Child("items"))...)
		}
		if t := *s.XListType; t != "atomic" && t != "set" && t != "map" {
			errs = append(errs, field.NotSupported(p.Child("x-kubernetes-list-type"), t, []string{"atomic", "set", "map"}))
		}
	}
	if len(s.XListMapKeys) > 0 {
		if s.XListType == nil {
			errs = append(errs, field.Required(p.Child("x-kubernetes-list-type"), "must be map if x-kubernetes-list-map-keys is non-empty"))
		} else if *s.XListType != "map" {
			errs = append(errs, field.Invalid(p.Child("x-kubernetes-list-type"), *s.XListType, "must be map if x-kubernetes-list-map-keys is non-empty"))
		}
	}
	if s.XListType != nil && *s.XListType == "map" {
		errs = append(errs, checkListMap(s, items, p)...)
	}
	if s.XListType != nil && (*s.XListType == "map" || *s.XListType == "set") && items != nil && items.Nullable {
		errs = append(errs, field.Forbidden(p.Child("items", "nullable"), "cannot be nullable when x-kubernetes-list-type is "+*s.XListType))
	}
	return errs
}

func requireType(s *apiextv1.JSONSchemaProps, want, ext string, p *field.Path) field.ErrorList {
	switch s.Type {
	case want:
		return nil
	case "":
		return field.ErrorList{field.Required(p.Child("type"), fmt.Sprintf("must be %s if %s is specified", want, ext))}
	default:
		return field.ErrorList{field.Invalid(p.Child("type"), s.Type, fmt.Sprintf("must be %s if %s is specified", want, ext))}
	}
}

// checkSetItemsAtomic requires the items of a set list to be atomic.
func checkSetItemsAtomic(items *apiextv1.JSONSchemaProps, p *field.Path) field.ErrorList {
	switch items.Type {
	case "array":
		if items.XListType != nil && *items.XListType != "atomic" {
			return field.ErrorList{field.Invalid(p.Child("x-kubernetes-list-type"), *items.XListType, "must be atomic as item of a list with x-kubernetes-list-type=set")}
		}
	case "object":
		if items.XMapType == nil || *items.XMapType != "atomic" {
			return field.ErrorList{field.Invalid(p.Child("x-kubernetes-map-type"), items.XMapType, "must be atomic as item of a list with x-kubernetes-list-type=set")}
		}
	}
	return nil
}

// checkListMap checks a list with x-kubernetes-list-type=map: keys named,
// items objects, keys scalar properties that are required or defaulted and
// not nullable.
func checkListMap(s, items *apiextv1.JSONSchemaProps, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(s.XListMapKeys) == 0 {
		errs = append(errs, field.Required(p.Child("x-kubernetes-list-map-keys"), "must not be empty if x-kubernetes-list-type is map"))
	}
	if s.Items == nil {
		return append(errs, field.Required(p.Child("items"), "must have a schema if x-kubernetes-list-type is map"))
	}
	if items == nil {
		return append(errs, field.Invalid(p.Child("items"), "", "must only have a single schema if x-kubernetes-list-type is map"))
	}
	if items.Type != "object" {
		return append(errs, field.Invalid(p.Child("items", "type"), items.Type, "must be object if parent array's x-kubernetes-list-type is map"))
	}
	seen := map[string]bool{}
	for _, k := range s.XListMapKeys {
		keyPath := p.Child("items", "properties").Key(k)
		if prop, ok := items.Properties[k]; !ok {
			errs = append(errs, field.Invalid(p.Child("x-kubernetes-list-map-keys"), s.XListMapKeys, "entries must all be names of item properties"))
		} else {
			if prop.Type == "array" || prop.Type == "object" {
				errs = append(errs, field.Invalid(keyPath.Child("type"), prop.Type, "must be a scalar type if parent array's x-kubernetes-list-type is map"))
			}
			if !contains(items.Required, k) && prop.Default == nil {
				errs = append(errs, field.Required(keyPath.Child("default"), "this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property"))
			}
			if prop.Nullable {
				errs = append(errs, field.Forbidden(keyPath.Child("nullable"), "this property is in x-kubernetes-list-map-keys, so it cannot be nullable"))
			}
		}
		if seen[k] {
			errs = append(errs, field.Invalid(p.Child("x-kubernetes-list-map-keys"), s.XListMapKeys, "must not contain duplicate entries"))
		}
		seen[k] = true
	}
	return errs
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
