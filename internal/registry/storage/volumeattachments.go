package storage

import (
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/printers"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

func volumeAttachmentsResource() *registry.Resource {
	return &registry.Resource{
		Group: Group, Version: "v1", Resource: "volumeattachments", Kind: "VolumeAttachment",
		ListKind: "VolumeAttachmentList", Singular: "volumeattachment", NoGeneration: true,
		ReturnDeletedObject:   true, // as kube-apiserver: DELETE answers the deleted object
		NoUnconditionalUpdate: true, // as kube-apiserver: a PUT must name a resourceVersion
		New:                   func() runtime.Object { return &storagev1.VolumeAttachment{} },
		NewList:               func() runtime.Object { return &storagev1.VolumeAttachmentList{} },
		Strategy: strategy.Typed[*storagev1.VolumeAttachment]{
			PrepareCreate: func(va *storagev1.VolumeAttachment) { va.Status = storagev1.VolumeAttachmentStatus{} },
			PrepareUpdate: func(va, old *storagev1.VolumeAttachment) { va.Status = old.Status },
			ValidateNew:   validateVolumeAttachment,
			ValidateChange: func(va, old *storagev1.VolumeAttachment) field.ErrorList {
				errs := strategy.ValidateMetaUpdate(&va.ObjectMeta, &old.ObjectMeta)
				errs = append(errs, validateVolumeAttachmentObject(va)...)
				if !apiequality.Semantic.DeepEqual(va.Spec, old.Spec) {
					errs = append(errs, immutable(strategy.SpecPath))
				}
				return errs
			},
		},
		Status: strategy.TypedStatus[*storagev1.VolumeAttachment]{
			PrepareUpdate: func(va, old *storagev1.VolumeAttachment) {
				va.Spec = old.Spec
				strategy.ResetMetaForStatus(&va.ObjectMeta, &old.ObjectMeta)
			},
			ValidateChange: func(va, old *storagev1.VolumeAttachment) field.ErrorList {
				errs := strategy.ValidateMetaUpdate(&va.ObjectMeta, &old.ObjectMeta)
				return append(errs, validateVolumeAttachmentObject(va)...)
			},
		},
		Attrs:           strategy.Attrs(false, strategy.NamespaceField[*storagev1.VolumeAttachment]),
		FieldLabelError: strategy.UnknownFieldLabel,
		Table:           printers.For(Group, "VolumeAttachment"),
	}
}

func validateVolumeAttachment(va *storagev1.VolumeAttachment) field.ErrorList {
	errs := strategy.ValidateMeta(&va.ObjectMeta, false, apivalidation.NameIsDNSSubdomain)
	return append(errs, validateVolumeAttachmentObject(va)...)
}

// validateVolumeAttachmentObject checks spec and status, as kube-apiserver
// does on every write of the kind.
func validateVolumeAttachmentObject(va *storagev1.VolumeAttachment) field.ErrorList {
	sp := strategy.SpecPath
	errs := validateVolumeAttachmentSource(sp.Child("source"), &va.Spec.Source)
	errs = append(errs, strategy.Check(sp.Child("nodeName"), va.Spec.NodeName, validation.IsDNS1123Subdomain)...)
	st := strategy.StatusPath
	size := 0
	for k, v := range va.Status.AttachmentMetadata {
		size += len(k) + len(v)
	}
	if size > maxAttachMetadata {
		errs = append(errs, field.TooLong(st.Child("attachmentMetadata"), "", maxAttachMetadata))
	}
	errs = append(errs, validateVolumeError(st.Child("attachError"), va.Status.AttachError)...)
	errs = append(errs, validateVolumeError(st.Child("detachError"), va.Status.DetachError)...)
	if name := va.Spec.Source.PersistentVolumeName; name != nil {
		errs = append(errs, strategy.Check(sp.Child("source", "persistentVolumeName"), *name, validation.IsDNS1123Subdomain)...)
	}
	// Last, as kube-apiserver's declarative validation reports it.
	return append(errs, csiDriverName(sp.Child("attacher"), va.Spec.Attacher)...)
}

func validateVolumeAttachmentSource(p *field.Path, s *storagev1.VolumeAttachmentSource) field.ErrorList {
	const oneOf = "must specify exactly one of inlineVolumeSpec and persistentVolumeName"
	switch {
	case s.InlineVolumeSpec == nil && s.PersistentVolumeName == nil:
		return field.ErrorList{field.Required(p, oneOf)}
	case s.InlineVolumeSpec != nil && s.PersistentVolumeName != nil:
		return field.ErrorList{field.Forbidden(p, oneOf)}
	case s.PersistentVolumeName != nil:
		if *s.PersistentVolumeName == "" {
			return field.ErrorList{field.Required(p.Child("persistentVolumeName"), "must specify non empty persistentVolumeName")}
		}
		return nil
	}
	return validateInlineVolumeSpec(p.Child("inlineVolumeSpec"), s.InlineVolumeSpec)
}

// validateInlineVolumeSpec checks a persistent volume spec given inline
// (migrated in-tree volumes): a CSI source, no claim, capacity, node
// affinity or class, reclaim policy Retain, filesystem mode.
func validateInlineVolumeSpec(p *field.Path, s *corev1.PersistentVolumeSpec) field.ErrorList {
	const inline = " in the context of inline volumes"
	var errs field.ErrorList
	if s.ClaimRef != nil {
		errs = append(errs, field.Forbidden(p.Child("claimRef"), "may not be specified"+inline))
	}
	if len(s.Capacity) != 0 {
		errs = append(errs, field.Forbidden(p.Child("capacity"), "may not be specified"+inline))
	}
	if s.CSI == nil {
		errs = append(errs, field.Required(p.Child("csi"), "has to be specified"+inline))
	}
	errs = append(errs, validateAccessModes(p.Child("accessModes"), s.AccessModes)...)
	if r := s.PersistentVolumeReclaimPolicy; r != "" && r != corev1.PersistentVolumeReclaimRetain {
		errs = append(errs, field.Forbidden(p.Child("persistentVolumeReclaimPolicy"), "may only be Retain"+inline))
	}
	if s.NodeAffinity != nil {
		errs = append(errs, field.Forbidden(p.Child("nodeAffinity"), "may not be specified"+inline))
	}
	if s.CSI != nil {
		cp := p.Child("csi")
		errs = append(errs, csiDriverName(cp.Child("driver"), s.CSI.Driver)...)
		if s.CSI.VolumeHandle == "" {
			errs = append(errs, field.Required(cp.Child("volumeHandle"), ""))
		}
	} else if s.HostPath == nil && s.NFS == nil && s.ISCSI == nil && s.FC == nil && s.Local == nil {
		errs = append(errs, field.Required(p, "must specify a volume type"))
	}
	if s.StorageClassName != "" {
		errs = append(errs, field.Forbidden(p.Child("storageClassName"), "may not be specified"+inline))
	}
	if m := s.VolumeMode; m != nil && *m != corev1.PersistentVolumeFilesystem {
		errs = append(errs, field.Forbidden(p.Child("volumeMode"), "may not specify volumeMode other than Filesystem"+inline))
	}
	return errs
}

func validateAccessModes(p *field.Path, modes []corev1.PersistentVolumeAccessMode) field.ErrorList {
	if len(modes) == 0 {
		return field.ErrorList{field.Required(p, "")}
	}
	var errs field.ErrorList
	rwop, other := false, false
	for _, m := range modes {
		switch m {
		case corev1.ReadWriteOncePod:
			rwop = true
		case corev1.ReadWriteOnce, corev1.ReadOnlyMany, corev1.ReadWriteMany:
			other = true
		default:
			errs = append(errs, field.NotSupported(p, m, []string{"ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"}))
		}
	}
	if rwop && other {
		errs = append(errs, field.Forbidden(p, "may not use ReadWriteOncePod with other access modes"))
	}
	return errs
}

func validateVolumeError(p *field.Path, e *storagev1.VolumeError) field.ErrorList {
	if e == nil {
		return nil
	}
	var errs field.ErrorList
	if len(e.Message) > maxVolumeErrorLength {
		errs = append(errs, field.TooLong(p.Child("message"), "", maxVolumeErrorLength))
	}
	if c := e.ErrorCode; c != nil && *c < 0 {
		errs = append(errs, field.Invalid(p.Child("errorCode"), *c, validation.InclusiveRangeError(0, 1<<31-1)))
	}
	return errs
}
