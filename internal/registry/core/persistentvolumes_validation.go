package core

import (
	"fmt"
	"path"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/registry/podspec"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

var (
	reclaimPolicies = sets.New(corev1.PersistentVolumeReclaimDelete, corev1.PersistentVolumeReclaimRecycle,
		corev1.PersistentVolumeReclaimRetain)
	volumeModes = sets.New(corev1.PersistentVolumeBlock, corev1.PersistentVolumeFilesystem)
)

func validatePersistentVolume(pv *corev1.PersistentVolume) field.ErrorList {
	errs := strategy.ValidateMeta(&pv.ObjectMeta, false, apivalidation.NameIsDNSSubdomain)
	errs = append(errs, validatePVSpec(&pv.Spec, pv.Name, strategy.SpecPath)...)
	return append(errs, validateMountOptionsAnnotation(pv)...)
}

func validatePVSpec(s *corev1.PersistentVolumeSpec, name string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(s.AccessModes) == 0 {
		errs = append(errs, field.Required(p.Child("accessModes"), ""))
	}
	errs = append(errs, podspec.ValidateAccessModes(s.AccessModes, p.Child("accessModes"))...)
	errs = append(errs, validatePVCapacity(s.Capacity, p.Child("capacity"))...)
	if s.PersistentVolumeReclaimPolicy != "" && !reclaimPolicies.Has(s.PersistentVolumeReclaimPolicy) {
		errs = append(errs, field.NotSupported(p.Child("persistentVolumeReclaimPolicy"), s.PersistentVolumeReclaimPolicy, sets.List(reclaimPolicies)))
	}
	hasAffinity := s.NodeAffinity != nil
	if hasAffinity {
		errs = append(errs, validateVolumeNodeAffinity(s.NodeAffinity, p.Child("nodeAffinity"))...)
	}
	errs = append(errs, podspec.ValidateSources(pvSources(s, name, p), p, func(src podspec.Source, checked bool) field.ErrorList {
		if checked && src.Name == "local" && !hasAffinity {
			return field.ErrorList{field.Required(p.Child("nodeAffinity"), "Local volume requires node affinity")}
		}
		return nil
	})...)
	if s.HostPath != nil && path.Clean(s.HostPath.Path) == "/" && s.PersistentVolumeReclaimPolicy == corev1.PersistentVolumeReclaimRecycle {
		errs = append(errs, field.Forbidden(p.Child("persistentVolumeReclaimPolicy"), "may not be 'recycle' for a hostPath mount of '/'"))
	}
	errs = append(errs, validateNameWith(p.Child("storageClassName"), s.StorageClassName, apivalidation.NameIsDNSSubdomain)...)
	if s.VolumeMode != nil && !volumeModes.Has(*s.VolumeMode) {
		errs = append(errs, field.NotSupported(p.Child("volumeMode"), *s.VolumeMode, sets.List(volumeModes)))
	}
	if vac := s.VolumeAttributesClassName; vac != nil {
		if *vac == "" {
			errs = append(errs, field.Required(p.Child("volumeAttributesClassName"), "an empty string is disallowed"))
		}
		errs = append(errs, validateNameWith(p.Child("volumeAttributesClassName"), *vac, apivalidation.NameIsDNSSubdomain)...)
		if s.CSI == nil {
			errs = append(errs, field.Required(p.Child("csi"), "has to be specified when using volumeAttributesClassName"))
		}
	}
	return errs
}

// validatePVCapacity requires a capacity of storage alone, positive.
func validatePVCapacity(c corev1.ResourceList, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(c) == 0 {
		errs = append(errs, field.Required(p, ""))
	}
	if _, ok := c[corev1.ResourceStorage]; !ok || len(c) > 1 {
		errs = append(errs, field.NotSupported(p, c, []corev1.ResourceName{corev1.ResourceStorage}))
	}
	for _, k := range strategy.SortedKeys(c) {
		q := c[k]
		errs = append(errs, validateBasicQuantity(q, p.Key(string(k)))...)
		errs = append(errs, validatePositiveQuantity(q, p.Key(string(k)))...)
	}
	return errs
}

func validateBasicQuantity(q resource.Quantity, p *field.Path) field.ErrorList {
	if q.Value() < 0 {
		return field.ErrorList{field.Invalid(p, q.Value(), "must be a valid resource quantity")}
	}
	return nil
}

func validatePositiveQuantity(q resource.Quantity, p *field.Path) field.ErrorList {
	if q.Cmp(resource.Quantity{}) <= 0 {
		return field.ErrorList{field.Invalid(p, q.String(), "must be greater than zero")}
	}
	return nil
}

// mountOptionSources are the volume sources that take mount options (the
// volume.beta.kubernetes.io/mount-options annotation).
func takesMountOptions(s *corev1.PersistentVolumeSpec) bool {
	src := &s.PersistentVolumeSource
	return src.GCEPersistentDisk != nil || src.AWSElasticBlockStore != nil || src.Glusterfs != nil || src.NFS != nil ||
		src.RBD != nil || src.Quobyte != nil || src.ISCSI != nil || src.Cinder != nil || src.CephFS != nil ||
		src.AzureFile != nil || src.VsphereVolume != nil || src.AzureDisk != nil || src.PhotonPersistentDisk != nil
}

const mountOptionsAnnotation = "volume.beta.kubernetes.io/mount-options"

func validateMountOptionsAnnotation(pv *corev1.PersistentVolume) field.ErrorList {
	if _, ok := pv.Annotations[mountOptionsAnnotation]; !ok || takesMountOptions(&pv.Spec) {
		return nil
	}
	return field.ErrorList{field.Forbidden(strategy.MetadataPath.Child("annotations", mountOptionsAnnotation),
		"may not specify mount options for this volume type")}
}

// validatePersistentVolumeUpdate keeps the volume source, the volume mode
// and a set node affinity fixed, and the volume attributes class from
// being unset.
func validatePersistentVolumeUpdate(pv, old *corev1.PersistentVolume) field.ErrorList {
	errs := strategy.ValidateMetaUpdate(&pv.ObjectMeta, &old.ObjectMeta)
	errs = append(errs, validatePersistentVolume(pv)...)
	src := pv.Spec.PersistentVolumeSource
	if old.Spec.CSI != nil && old.Spec.CSI.ControllerExpandSecretRef == nil && src.CSI != nil && src.CSI.ControllerExpandSecretRef != nil {
		// Setting controllerExpandSecretRef once is allowed.
		csi := *src.CSI
		csi.ControllerExpandSecretRef = nil
		src.CSI = &csi
	}
	if !apiequality.Semantic.DeepEqual(src, old.Spec.PersistentVolumeSource) {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "persistentvolumesource"),
			fmt.Sprintf("spec.persistentvolumesource is immutable after creation\n%v", internalDiff(old.Spec.PersistentVolumeSource, src))))
	}
	errs = append(errs, apivalidation.ValidateImmutableField(pv.Spec.VolumeMode, old.Spec.VolumeMode, field.NewPath("volumeMode"))...)
	if old.Spec.NodeAffinity != nil && !nodeAffinityEqualModuloBetaLabels(pv.Spec.NodeAffinity, old.Spec.NodeAffinity) {
		errs = append(errs, field.Invalid(field.NewPath("nodeAffinity"), internalValue(pv.Spec.NodeAffinity),
			apivalidation.FieldImmutableErrorMsg+", except for updating from beta label to GA"))
	}
	if old.Spec.VolumeAttributesClassName != nil && pv.Spec.VolumeAttributesClassName == nil {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "volumeAttributesClassName"), "update from non-nil value to nil is forbidden"))
	}
	return errs
}
