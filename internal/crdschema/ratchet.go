package crdschema

import (
	"sort"

	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/cel/common"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
)

// ValidateUpdate checks obj (already pruned and defaulted) on an update
// from old, with Kubernetes' validation ratcheting (on by default since
// 1.30, GA in 1.33): a schema error on a value equal to its old value (a
// field, or a list item correlated by its map keys) is not reported, so an
// object stored under an older, looser schema can still be updated
// elsewhere. x-kubernetes-list-type duplicates are reported only when old
// had none. Otherwise as Validate.
func (s *Schema) ValidateUpdate(obj, old map[string]any) field.ErrorList {
	var data any = obj
	if obj == nil {
		data = map[string]any{}
	}
	errs := s.ratchet(nil, s.validation, data, old, common.NewCorrelatedObject(data, old, s.celRoot()))
	return append(errs, s.listTypesOnUpdate(data, old)...)
}

// ValidateStatusUpdate checks an update through the status subresource as
// Kubernetes does: only status is validated against the schema (its
// properties[status], with ratcheting), errors under "status"; list-type
// duplicates anywhere only when old had none. A missing status, or a
// schema without properties[status], is not validated.
func (s *Schema) ValidateStatusUpdate(obj, old map[string]any) field.ErrorList {
	var errs field.ErrorList
	status, hasStatus := obj["status"]
	if statusSchema, ok := s.validation.Properties["status"]; ok && hasStatus {
		corr := common.NewCorrelatedObject(obj, old, s.celRoot()).Key("status")
		errs = s.ratchet(field.NewPath("status"), &statusSchema, status, old["status"], corr)
	}
	return append(errs, s.listTypesOnUpdate(obj, old)...)
}

// ratchet validates value against schema with kube-openapi's validator,
// dropping the errors of values that did not change (correlation), and
// reports the rest under fldPath sorted by path.
func (s *Schema) ratchet(fldPath *field.Path, schema *spec.Schema, value, old any, correlation *common.CorrelatedObject) field.ErrorList {
	v := apiservervalidation.NewRatchetingSchemaValidator(schema, nil, "", strfmt.Default)
	var opts []apiservervalidation.ValidationOption
	if correlation != nil {
		opts = append(opts, apiservervalidation.WithRatcheting(correlation))
	}
	errs := resultToFieldErrors(fldPath, v.ValidateUpdate(value, old, opts...))
	sort.SliceStable(errs, func(i, j int) bool { return errs[i].Field < errs[j].Field })
	return errs
}

// listTypesOnUpdate reports list-type duplicates of obj unless old had
// some already.
func (s *Schema) listTypesOnUpdate(obj any, old map[string]any) field.ErrorList {
	if old != nil && len(validateListTypes(nil, s.props, old)) > 0 {
		return nil
	}
	return validateListTypes(nil, s.props, obj)
}
