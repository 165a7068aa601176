package core

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/registry/podspec"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

func validatePVC(c *corev1.PersistentVolumeClaim) field.ErrorList {
	errs := strategy.ValidateMeta(&c.ObjectMeta, true, apivalidation.NameIsDNSSubdomain)
	return append(errs, podspec.ValidateClaimSpec(&c.Spec, strategy.SpecPath)...)
}

const pvcImmutableSpec = "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims"

// validatePVCUpdate keeps the spec fixed but for what kube-apiserver lets
// change: volumeName once, the class once when it was unset (or named by
// the beta annotation), the storage request (not below status.capacity)
// and the volume attributes class of a bound claim.
func validatePVCUpdate(c, old *corev1.PersistentVolumeClaim) field.ErrorList {
	errs := strategy.ValidateMetaUpdate(&c.ObjectMeta, &old.ObjectMeta)
	errs = append(errs, validatePVC(c)...)
	spec, oldSpec := c.Spec.DeepCopy(), old.Spec.DeepCopy()
	if old.Spec.VolumeName == "" {
		oldSpec.VolumeName = spec.VolumeName
	}
	oldClass, hadAnnotation := old.Annotations[betaStorageClassAnnotation]
	newClass, hasAnnotation := c.Annotations[betaStorageClassAnnotation]
	switch {
	case hadAnnotation && old.Spec.StorageClassName == nil && c.Spec.StorageClassName != nil &&
		*c.Spec.StorageClassName == oldClass && (!hasAnnotation || newClass == oldClass):
		spec.StorageClassName = nil // moving from the annotation to the field
	default:
		if newClass != oldClass {
			errs = append(errs, field.Invalid(strategy.MetadataPath.Child("annotations", betaStorageClassAnnotation), newClass, apivalidation.FieldImmutableErrorMsg))
		}
		if c.Spec.StorageClassName != nil && old.Spec.StorageClassName == nil && (!hadAnnotation || *c.Spec.StorageClassName == oldClass) {
			spec.StorageClassName = oldSpec.StorageClassName // set once from unset
		}
	}
	bound := c.Status.Phase == corev1.ClaimBound
	if bound && spec.Resources.Requests != nil {
		spec.Resources.Requests[corev1.ResourceStorage] = old.Spec.Resources.Requests[corev1.ResourceStorage]
	}
	if bound {
		spec.VolumeAttributesClassName = oldSpec.VolumeAttributesClassName
	}
	if !apiequality.Semantic.DeepEqual(spec, oldSpec) {
		errs = append(errs, field.Forbidden(strategy.SpecPath, fmt.Sprintf("%s\n%v", pvcImmutableSpec, internalDiff(*oldSpec, *spec))))
	}
	newSize, oldSize := c.Spec.Resources.Requests[corev1.ResourceStorage], old.Spec.Resources.Requests[corev1.ResourceStorage]
	if statusSize := old.Status.Capacity[corev1.ResourceStorage]; newSize.Cmp(oldSize) < 0 && newSize.Cmp(statusSize) <= 0 {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "resources", "requests", "storage"), "field can not be less than status.capacity"))
	}
	errs = append(errs, apivalidation.ValidateImmutableField(c.Spec.VolumeMode, old.Spec.VolumeMode, field.NewPath("volumeMode"))...)
	if old.Status.CurrentVolumeAttributesClassName != nil && !apiequality.Semantic.DeepEqual(old.Spec.VolumeAttributesClassName, c.Spec.VolumeAttributesClassName) {
		vp := field.NewPath("spec", "volumeAttributesClassName")
		switch vac := c.Spec.VolumeAttributesClassName; {
		case vac == nil:
			errs = append(errs, field.Forbidden(vp, "update to nil is forbidden when status.currentVolumeAttributesClassName is not nil"))
		case *vac == "":
			errs = append(errs, field.Forbidden(vp, "update to empty string is forbidden when status.currentVolumeAttributesClassName is not nil"))
		}
	}
	return errs
}

var resizeStatuses = []corev1.ClaimResourceStatus{
	corev1.PersistentVolumeClaimControllerResizeInProgress, corev1.PersistentVolumeClaimControllerResizeInfeasible,
	corev1.PersistentVolumeClaimNodeResizeInProgress, corev1.PersistentVolumeClaimNodeResizeInfeasible,
	corev1.PersistentVolumeClaimNodeResizePending,
}

// validatePVCStatusUpdate checks the capacity quantities, the condition
// reasons of the health status, and the resize statuses and allocated
// resources (storage, or a resource with a domain).
func validatePVCStatusUpdate(c, old *corev1.PersistentVolumeClaim) field.ErrorList {
	errs := strategy.ValidateMetaUpdate(&c.ObjectMeta, &old.ObjectMeta)
	if len(c.Spec.AccessModes) == 0 {
		errs = append(errs, field.Required(field.NewPath("Spec", "accessModes"), ""))
	}
	cp := field.NewPath("status", "capacity")
	for _, k := range strategy.SortedKeys(c.Status.Capacity) {
		errs = append(errs, validateBasicQuantity(c.Status.Capacity[k], cp.Key(string(k)))...)
	}
	rp := field.NewPath("status", "allocatedResourceStatuses")
	for _, k := range strategy.SortedKeys(c.Status.AllocatedResourceStatuses) {
		errs = append(errs, validateClaimResourceKey(string(k), rp)...)
		if v := c.Status.AllocatedResourceStatuses[k]; !containsStatus(v) {
			errs = append(errs, field.NotSupported(rp, k, sortedResizeStatuses()))
		}
	}
	ap := field.NewPath("status", "allocatedResources")
	for _, k := range strategy.SortedKeys(c.Status.AllocatedResources) {
		if kerrs := validateClaimResourceKey(string(k), ap); len(kerrs) > 0 {
			errs = append(errs, kerrs...)
			continue
		}
		q := c.Status.AllocatedResources[k]
		if qerrs := validateBasicQuantity(q, ap.Key(string(k))); len(qerrs) > 0 {
			errs = append(errs, qerrs...)
		} else {
			errs = append(errs, validateQuantityFor(corev1.ResourceStorage, q, ap.Key(string(k)))...)
		}
	}
	return errs
}

func containsStatus(s corev1.ClaimResourceStatus) bool {
	for _, r := range resizeStatuses {
		if r == s {
			return true
		}
	}
	return false
}

func sortedResizeStatuses() []string {
	out := make([]string, len(resizeStatuses))
	for i, s := range resizeStatuses {
		out[i] = string(s)
	}
	return out
}

// validateClaimResourceKey accepts storage, or a qualified name with a
// domain outside kubernetes.io.
func validateClaimResourceKey(k string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(k) {
		errs = append(errs, field.Invalid(p, k, msg))
	}
	if len(errs) > 0 {
		return errs
	}
	if isNativeResource(corev1.ResourceName(k)) && k != string(corev1.ResourceStorage) {
		return field.ErrorList{field.NotSupported(p, k, []corev1.ResourceName{corev1.ResourceStorage})}
	}
	return nil
}
