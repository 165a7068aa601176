package crdschema

import (
	"context"
	"reflect"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
	"k8s.io/kube-openapi/pkg/validation/validate"
)

// checkDefaults requires every default reachable through properties and
// items to be valid JSON, pruned (no field its schema does not specify) and
// valid against its own schema, then against the x-kubernetes-validations
// rules of its schema, as Kubernetes requires for v1 CRDs. Defaults inside
// the apiVersion, kind or metadata of an embedded resource are only
// validated, not pruning-checked (Kubernetes coerces them as ObjectMeta).
// st is s in structural form. The rules of all defaults share one runtime
// cost budget; once it is spent, the remaining defaults are not checked.
func checkDefaults(s *apiextv1.JSONSchemaProps, st *structuralschema.Structural, p *field.Path) field.ErrorList {
	root := *st
	root.XEmbeddedResource = true
	budget := int64(celconfig.RuntimeCELCostBudget)
	return defaultsWalk(s, &root, p, true, false, &budget)
}

func defaultsWalk(s *apiextv1.JSONSchemaProps, st *structuralschema.Structural, p *field.Path, isRoot, insideMeta bool, budget *int64) field.ErrorList {
	if s == nil || st == nil {
		return nil
	}
	if s.XEmbeddedResource {
		insideMeta = false
	}
	var errs field.ErrorList
	if s.Default != nil {
		errs = append(errs, checkOneDefault(s, st, p, isRoot, insideMeta, budget)...)
		if *budget < 0 {
			return errs
		}
	}
	errs = append(errs, defaultsWalk(itemsSchema(s), st.Items, p.Child("items"), false, insideMeta, budget)...)
	if *budget < 0 {
		return errs
	}
	for _, k := range sortedKeys(s.Properties) {
		prop := s.Properties[k]
		sub := insideMeta
		if s.XEmbeddedResource && isMetaField(k) {
			sub = true
		}
		var stProp *structuralschema.Structural
		if v, ok := st.Properties[k]; ok {
			stProp = &v
		}
		errs = append(errs, defaultsWalk(&prop, stProp, p.Child("properties").Key(k), false, sub, budget)...)
		if *budget < 0 {
			return errs
		}
	}
	return errs
}

func checkOneDefault(s *apiextv1.JSONSchemaProps, st *structuralschema.Structural, p *field.Path, isRoot, insideMeta bool, budget *int64) field.ErrorList {
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
	if verrs := resultToFieldErrors(dp, v.Validate(defaultValue(s.Default))); len(verrs) > 0 {
		return append(errs, verrs...)
	}
	errs = append(errs, validateListTypes(dp, s, defaultValue(s.Default))...)
	return append(errs, defaultRules(st, dp, defaultValue(s.Default), isRoot || s.XEmbeddedResource, budget)...)
}

// defaultRules runs the rules of a default's schema on the default, as an
// unchanged value and (for rules with optionalOldSelf) as a new one,
// charging the costlier run to budget.
func defaultRules(st *structuralschema.Structural, dp *field.Path, value any, isResourceRoot bool, budget *int64) field.ErrorList {
	v := cel.NewValidator(st, isResourceRoot, celconfig.PerCallLimit)
	if v == nil {
		return nil
	}
	ctx := context.Background()
	errs, remaining := v.Validate(ctx, dp, st, value, value, *budget)
	if len(errs) == 0 {
		var asNew field.ErrorList
		var remainingAsNew int64
		asNew, remainingAsNew = v.Validate(ctx, dp, st, value, nil, *budget)
		errs = asNew
		remaining = min(remaining, remainingAsNew)
	}
	*budget = remaining
	return errs
}
