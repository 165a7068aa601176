package strategy

import (
	"reflect"
	"unicode"
	"unicode/utf8"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateTemplateMeta checks the metadata of an object template (an
// ephemeral volume's claim, a ResourceClaimTemplate's claims), as
// kube-apiserver's ValidateTemplateObjectMeta: valid labels and
// annotations, and no other field set; such a field is named as
// kube-apiserver names it, its Go name with a lower-case first letter.
func ValidateTemplateMeta(m *metav1.ObjectMeta, p *field.Path) field.ErrorList {
	errs := apivalidation.ValidateAnnotations(m.Annotations, p.Child("annotations"))
	errs = append(errs, metav1validation.ValidateLabels(m.Labels, p.Child("labels"))...)
	t, v := reflect.TypeOf(*m), reflect.ValueOf(*m)
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Name == "Labels" || f.Name == "Annotations" || v.Field(i).IsZero() {
			continue
		}
		r, n := utf8.DecodeRuneInString(f.Name)
		errs = append(errs, field.Forbidden(p.Child(string(unicode.ToLower(r))+f.Name[n:]), "cannot be set"))
	}
	return errs
}
