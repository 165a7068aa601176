package strategy

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
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

// ValidateMeta checks the metadata of a new object of a kind Kubernetes
// validates with its core metadata rules: ValidateGenericMeta's checks,
// then each finalizer's name must be fully qualified (with a "/") or a
// standard one ("kubernetes", "orphan", "foregroundDeletion").
func ValidateMeta(m *metav1.ObjectMeta, namespaced bool, nameFn apivalidation.ValidateNameFunc) field.ErrorList {
	return append(ValidateGenericMeta(m, namespaced, nameFn), kubeFinalizerNames(m.Finalizers)...)
}

// ValidateGenericMeta checks the metadata of a new object as
// apimachinery does alone (kinds whose Kubernetes validation does not
// add the core rules: admission registration, CRDs, APIServices, leases,
// core/v1 events, runtime classes, disruption budgets, pod certificate requests):
// name (by nameFn), namespace presence, labels, annotations, owner
// references, finalizers and managed fields.
func ValidateGenericMeta(m *metav1.ObjectMeta, namespaced bool, nameFn apivalidation.ValidateNameFunc) field.ErrorList {
	return apivalidation.ValidateObjectMeta(m, namespaced, nameFn, MetadataPath)
}

// kubeFinalizerNames refuses finalizer names that are neither fully
// qualified nor standard, as Kubernetes' core metadata validation.
func kubeFinalizerNames(finalizers []string) field.ErrorList {
	var errs field.ErrorList
	for i, f := range finalizers {
		switch f {
		case string(corev1.FinalizerKubernetes), metav1.FinalizerOrphanDependents, metav1.FinalizerDeleteDependents:
			continue
		}
		if !strings.Contains(f, "/") {
			errs = append(errs, field.Invalid(MetadataPath.Child("finalizers").Index(i), f,
				"name is neither a standard finalizer name nor is it fully qualified"))
		}
	}
	return errs
}

// ValidateMetaUpdate checks the metadata of an update of a kind
// Kubernetes validates with its core metadata rules:
// ValidateGenericMetaUpdate's checks, then the finalizer names (see
// ValidateMeta).
func ValidateMetaUpdate(m, old *metav1.ObjectMeta) field.ErrorList {
	return append(ValidateGenericMetaUpdate(m, old), kubeFinalizerNames(m.Finalizers)...)
}

// ValidateGenericMetaUpdate checks the metadata of an update as
// apimachinery does (see ValidateGenericMeta): immutable system fields,
// labels, annotations, owner references, finalizers. An update that names
// no resourceVersion is unconditional (the server resolves it), so the
// check that requires one is made against old's.
func ValidateGenericMetaUpdate(m, old *metav1.ObjectMeta) field.ErrorList {
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
