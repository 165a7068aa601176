package crdschema

import (
	"context"
	"fmt"

	apiext "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/common"
)

// This file runs a schema's x-kubernetes-validations (CEL) rules on custom
// objects with Kubernetes' own rule validator, so that rules, their
// libraries, cost limits and messages mean what they mean on a cluster.

// toStructural converts a v1 schema into apiextensions-apiserver's
// structural form, which the CEL packages read.
func toStructural(props *apiextv1.JSONSchemaProps) (*structuralschema.Structural, error) {
	internal, err := toInternal(props)
	if err != nil {
		return nil, err
	}
	return structuralschema.NewStructural(internal)
}

// toInternal converts a v1 schema into the internal apiextensions form.
func toInternal(props *apiextv1.JSONSchemaProps) (*apiext.JSONSchemaProps, error) {
	internal := &apiext.JSONSchemaProps{}
	if err := apiextv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(props, internal, nil); err != nil {
		return nil, fmt.Errorf("converting the schema to its internal form: %w", err)
	}
	return internal, nil
}

// HasRules reports whether the schema has x-kubernetes-validations rules
// anywhere.
func (s *Schema) HasRules() bool { return s.ruleValidator() != nil }

// ruleValidator returns the compiled rules of the whole object, compiling
// them on first use (a schema compiled only to check a CRD never pays for
// it); nil when the schema has no rules.
func (s *Schema) ruleValidator() *ruleTree {
	s.rulesOnce.Do(func() {
		s.rules = newRuleTree(s.structural, s.celRoot(), celconfig.PerCallLimit)
	})
	return s.rules
}

// ValidateRules evaluates the schema's x-kubernetes-validations rules on
// obj, as kube-apiserver does after the schema validation of a custom
// object: obj is the whole object (pruned, defaulted, validated), old the
// stored object on update and nil on create.
//
// On create, transition rules (those using oldSelf) are skipped unless they
// set optionalOldSelf. On update, errors of rules without oldSelf on values
// equal to their old values are ratcheted: reported as warnings through
// ctx (k8s.io/apiserver/pkg/warning) instead of errors. The rules of one
// object share kube-apiserver's runtime cost budget (10,000,000, each
// expression at most 1,000,000); running out ends validation with
// kube-apiserver's error. ctx cancels evaluation.
//
// Callers run it only when the earlier errors do not block it (see
// RulesBlocked), as kube-apiserver does.
func (s *Schema) ValidateRules(ctx context.Context, obj, old map[string]any) field.ErrorList {
	v := s.ruleValidator()
	if v == nil {
		return nil
	}
	var oldObj any
	var r ratchet
	if old != nil {
		oldObj = old
		r.current = common.NewCorrelatedObject(obj, old, v.schema)
	}
	errs, _ := v.validate(ctx, nil, obj, oldObj, r, celconfig.RuntimeCELCostBudget)
	return errs
}

// RulesBlocked returns the error kube-apiserver reports instead of
// running the validation rules when errs (the object's other validation
// errors) contain a missing required field, an unsupported enum value, a
// value too long, too many items or properties, or a wrong type: rules
// would see values of the wrong shape. It returns nil when the rules may
// run.
func RulesBlocked(errs field.ErrorList) *field.Error {
	for _, err := range errs {
		switch err.Type {
		case field.ErrorTypeNotSupported, field.ErrorTypeRequired, field.ErrorTypeTooLong, field.ErrorTypeTooMany, field.ErrorTypeTypeInvalid:
			return field.Invalid(nil, nil, "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation")
		}
	}
	return nil
}
