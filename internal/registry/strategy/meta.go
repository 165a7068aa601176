package strategy

import (
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Paths every kind's messages start from.
var (
	MetadataPath = field.NewPath("metadata")
	SpecPath     = field.NewPath("spec")
	StatusPath   = field.NewPath("status")
)

// ValidateMeta checks the metadata of a new object: name (by nameFn),
// namespace presence, labels, annotations, owner references, finalizers and
// managed fields.
func ValidateMeta(m *metav1.ObjectMeta, namespaced bool, nameFn apivalidation.ValidateNameFunc) field.ErrorList {
	return apivalidation.ValidateObjectMeta(m, namespaced, nameFn, MetadataPath)
}

// ValidateMetaUpdate checks the metadata of an update: immutable system
// fields, labels, annotations, owner references, finalizers. An update
// that names no resourceVersion is unconditional (the server resolves it),
// so the check that requires one is made against old's.
func ValidateMetaUpdate(m, old *metav1.ObjectMeta) field.ErrorList {
	if m.ResourceVersion == "" {
		c := *m
		c.ResourceVersion = old.ResourceVersion
		if c.ResourceVersion == "" {
			c.ResourceVersion = "0"
		}
		m = &c
	}
	errs := apivalidation.ValidateObjectMetaUpdate(m, old, MetadataPath)
	return append(errs, apivalidation.ValidateFinalizers(m.Finalizers, MetadataPath.Child("finalizers"))...)
}

// ResetMetaForStatus gives a status update old's labels, annotations,
// finalizers and owner references: the status endpoint writes status only.
func ResetMetaForStatus(m, old *metav1.ObjectMeta) {
	metav1.ResetObjectMetaForStatus(m, old)
}
