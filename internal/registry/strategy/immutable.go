package strategy

import (
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Immutable refuses a change of a field that kube-apiserver v1.37 checks
// with its declarative rules: the error shows no value ("Invalid value:
// null: field is immutable"), unlike apivalidation.ValidateImmutableField.
func Immutable(p *field.Path, v, old any) field.ErrorList {
	if apiequality.Semantic.DeepEqual(v, old) {
		return nil
	}
	return field.ErrorList{field.Invalid(p, nil, apivalidation.FieldImmutableErrorMsg)}
}
