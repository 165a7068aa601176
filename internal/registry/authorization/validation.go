package authorization

import (
	"fmt"

	authorizationv1 "k8s.io/api/authorization/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

const group = "authorization.k8s.io"

// invalid is the 422 of a review: kube-apiserver names the group only
// (the kind of its internal object is unset) and no object.
func invalid(errs field.ErrorList) error {
	return apierrors.NewInvalid(schema.GroupKind{Group: group}, "", errs)
}

var (
	specPath      = field.NewPath("spec")
	resAttrsPath  = field.NewPath("spec", "resourceAttributes")
	nonResPath    = field.NewPath("spec", "nonResourceAttributes")
	metadataPath  = field.NewPath("metadata")
	exactlyOneMsg = "exactly one of nonResourceAttributes or resourceAttributes must be specified"
)

// nonResourceValue is nonResourceAttributes as kube-apiserver prints it in
// errors: its internal form, whose fields have no JSON names.
type nonResourceValue struct {
	Path, Verb string
}

func printedNonResource(a *authorizationv1.NonResourceAttributes) any {
	if a == nil {
		return nil
	}
	return nonResourceValue{Path: a.Path, Verb: a.Verb}
}

// validateAttributes checks that a review asks about exactly one of a
// resource and a non-resource path, and its selector attributes.
func validateAttributes(res *authorizationv1.ResourceAttributes, nonRes *authorizationv1.NonResourceAttributes) field.ErrorList {
	var errs field.ErrorList
	if (res == nil) == (nonRes == nil) {
		errs = append(errs, field.Invalid(specPath, printedNonResource(nonRes), exactlyOneMsg))
	}
	return errs
}

func validateSelectors(res *authorizationv1.ResourceAttributes) field.ErrorList {
	if res == nil {
		return nil
	}
	errs := validateFieldSelector(res.FieldSelector, resAttrsPath.Child("fieldSelector"))
	return append(errs, validateLabelSelector(res.LabelSelector, resAttrsPath.Child("labelSelector"))...)
}

// validateFieldSelector checks field selector attributes: a raw selector
// or requirements, not both; requirements with operators kube-apiserver
// may not know are accepted (a newer client's).
func validateFieldSelector(s *authorizationv1.FieldSelectorAttributes, p *field.Path) field.ErrorList {
	if s == nil {
		return nil
	}
	errs := rawOrRequirements(s.RawSelector, len(s.Requirements), p)
	opts := metavalidation.FieldSelectorValidationOptions{AllowUnknownOperatorInRequirement: true}
	for i, r := range s.Requirements {
		errs = append(errs, metavalidation.ValidateFieldSelectorRequirement(r, opts, p.Child("requirements").Index(i))...)
	}
	return errs
}

func validateLabelSelector(s *authorizationv1.LabelSelectorAttributes, p *field.Path) field.ErrorList {
	if s == nil {
		return nil
	}
	errs := rawOrRequirements(s.RawSelector, len(s.Requirements), p)
	opts := metavalidation.LabelSelectorValidationOptions{AllowUnknownOperatorInRequirement: true}
	for i, r := range s.Requirements {
		errs = append(errs, metavalidation.ValidateLabelSelectorRequirement(r, opts, p.Child("requirements").Index(i))...)
	}
	return errs
}

func rawOrRequirements(raw string, requirements int, p *field.Path) field.ErrorList {
	switch {
	case raw != "" && requirements > 0:
		return field.ErrorList{field.Invalid(p.Child("rawSelector"), raw, "may not specified at the same time as requirements")}
	case raw == "" && requirements == 0:
		return field.ErrorList{field.Required(p.Child("requirements"), fmt.Sprintf("when %s is specified, requirements or rawSelector is required", p))}
	}
	return nil
}

// validateSubjectSpec checks the spec of a review about someone else.
func validateSubjectSpec(s *authorizationv1.SubjectAccessReviewSpec) field.ErrorList {
	errs := validateAttributes(s.ResourceAttributes, s.NonResourceAttributes)
	if s.User == "" && len(s.Groups) == 0 {
		errs = append(errs, field.Invalid(specPath.Child("user"), s.User, "at least one of user or group must be specified"))
	}
	return append(errs, validateSelectors(s.ResourceAttributes)...)
}

// validateEmptyMeta requires metadata to be empty but for managedFields
// (and what except keeps).
func validateEmptyMeta(m metav1.ObjectMeta, except func(*metav1.ObjectMeta), msg string) field.ErrorList {
	c := m
	c.ManagedFields = nil
	if except != nil {
		except(&c)
	}
	if apiequality.Semantic.DeepEqual(metav1.ObjectMeta{}, c) {
		return nil
	}
	return field.ErrorList{field.Invalid(metadataPath, m, msg)}
}
