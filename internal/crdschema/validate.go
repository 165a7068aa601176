package crdschema

import (
	"encoding/json"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	openapierrors "k8s.io/kube-openapi/pkg/validation/errors"
	"k8s.io/kube-openapi/pkg/validation/validate"
)

// Validate checks obj (already pruned and defaulted) against the schema: type, required, enum, minimum/maximum
// (exclusive too), minLength/maxLength, minItems/maxItems, pattern, format, nullable, uniqueItems (x-kubernetes-list-type set),
// oneOf/anyOf/allOf/not, x-kubernetes-int-or-string. Field paths as Kubernetes reports them (spec.replicas: Invalid value: 11:
// spec.replicas in body should be less than or equal to 10 / spec.image: Required value). metadata is not validated here.
//
// More precisely, metadata is validated only as far as the schema restricts
// it (the root schema may constrain metadata.name and generateName); the
// ObjectMeta rules are the server's. Error types follow Kubernetes: missing
// required fields are Required, enum mismatches NotSupported, wrong types
// TypeInvalid ("must be of type integer"), maxLength TooLong, maxItems and
// maxProperties TooMany, duplicates in x-kubernetes-list-type set/map lists
// Duplicate, everything else Invalid with kube-openapi's message. Errors are
// sorted by path so the list is deterministic. A nil obj is validated as an
// empty object. Validate does not mutate obj.
func (s *Schema) Validate(obj map[string]any) field.ErrorList {
	var data any = obj
	if obj == nil {
		data = map[string]any{}
	}
	errs := resultToFieldErrors(nil, s.validator.Validate(data))
	sort.SliceStable(errs, func(i, j int) bool { return errs[i].Field < errs[j].Field })
	return append(errs, validateListTypes(nil, s.props, data)...)
}

// resultToFieldErrors turns kube-openapi's result into field errors under
// fldPath, the way Kubernetes reports custom resource validation failures.
func resultToFieldErrors(fldPath *field.Path, result *validate.Result) field.ErrorList {
	if result == nil || result.IsValid() {
		return nil
	}
	var errs field.ErrorList
	for _, err := range result.Errors {
		verr, ok := err.(*openapierrors.Validation)
		if !ok {
			errs = append(errs, field.Invalid(fldPath, "", err.Error()))
			continue
		}
		errPath := fldPath
		if verr.Name != "" && verr.Name != "." {
			errPath = errPath.Child(strings.TrimPrefix(verr.Name, "."))
		}
		errs = append(errs, validationError(errPath, verr))
	}
	return errs
}

func validationError(p *field.Path, e *openapierrors.Validation) *field.Error {
	switch e.Code() {
	case openapierrors.RequiredFailCode:
		return field.Required(p, "")
	case openapierrors.EnumFailCode:
		values := make([]string, 0, len(e.Values))
		for _, v := range e.Values {
			if str, ok := v.(string); ok {
				values = append(values, str)
				continue
			}
			b, _ := json.Marshal(v)
			values = append(values, string(b))
		}
		return field.NotSupported(p, e.Value, values)
	case openapierrors.TooLongFailCode:
		return field.TooLong(p, "", int(asInt64(e.Valid)))
	case openapierrors.MaxItemsFailCode, openapierrors.TooManyPropertiesCode:
		return field.TooMany(p, int(asInt64(e.Value)), int(asInt64(e.Valid)))
	case openapierrors.InvalidTypeCode:
		return field.TypeInvalid(p, valueOrEmpty(e.Value), e.Error())
	default:
		return field.Invalid(p, valueOrEmpty(e.Value), e.Error())
	}
}

func asInt64(v any) int64 {
	if i, ok := v.(int64); ok {
		return i
	}
	return -1
}

func valueOrEmpty(v any) any {
	if v == nil {
		return ""
	}
	return v
}
