package storage

import (
	storagev1 "k8s.io/api/storage/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/printers"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

func csiDriversResource() *registry.Resource {
	return &registry.Resource{
		Group: Group, Version: "v1", Resource: "csidrivers", Kind: "CSIDriver", ListKind: "CSIDriverList",
		Singular:              "csidriver",
		ReturnDeletedObject:   true, // as kube-apiserver: DELETE answers the deleted object
		NoUnconditionalUpdate: true, // as kube-apiserver: a PUT must name a resourceVersion
		// Kubernetes' strategy sets no generation on create and adds one
		// on every spec change: PrepareUpdate keeps that count.
		NoGeneration: true,
		New:          func() runtime.Object { return &storagev1.CSIDriver{} },
		NewList:      func() runtime.Object { return &storagev1.CSIDriverList{} },
		Strategy: strategy.Typed[*storagev1.CSIDriver]{
			PrepareUpdate: func(d, old *storagev1.CSIDriver) {
				if !apiequality.Semantic.DeepEqual(d.Spec, old.Spec) {
					d.Generation = old.Generation + 1
				}
			},
			Defaults: defaultCSIDriver,
			ValidateNew: func(d *storagev1.CSIDriver) field.ErrorList {
				errs := strategy.ValidateMeta(&d.ObjectMeta, false, apivalidation.NameIsDNSSubdomain)
				return append(errs, validateCSIDriverSpec(&d.Spec)...)
			},
			ValidateChange: validateCSIDriverUpdate,
		},
		Attrs:           strategy.Attrs(false, strategy.NamespaceField[*storagev1.CSIDriver]),
		FieldLabelError: strategy.UnknownFieldLabel,
		Table:           printers.For(Group, "CSIDriver"),
	}
}

// defaultCSIDriver fills what kube-apiserver v1.37 fills (with the
// SELinuxMountReadWriteOncePod and VolumeLimitScaling gates on, as they
// are by default).
func defaultCSIDriver(d *storagev1.CSIDriver) {
	s := &d.Spec
	if s.AttachRequired == nil {
		s.AttachRequired = new(true)
	}
	if s.PodInfoOnMount == nil {
		s.PodInfoOnMount = new(false)
	}
	if s.StorageCapacity == nil {
		s.StorageCapacity = new(false)
	}
	if s.FSGroupPolicy == nil {
		s.FSGroupPolicy = new(storagev1.ReadWriteOnceWithFSTypeFSGroupPolicy)
	}
	if len(s.VolumeLifecycleModes) == 0 {
		s.VolumeLifecycleModes = []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecyclePersistent}
	}
	if s.RequiresRepublish == nil {
		s.RequiresRepublish = new(false)
	}
	if s.SELinuxMount == nil {
		s.SELinuxMount = new(false)
	}
	if s.PreventPodSchedulingIfMissing == nil {
		s.PreventPodSchedulingIfMissing = new(false)
	}
}

func validateCSIDriverSpec(s *storagev1.CSIDriverSpec) field.ErrorList {
	p := strategy.SpecPath
	var errs field.ErrorList
	for _, f := range []struct {
		name string
		v    *bool
	}{
		{"attachedRequired", s.AttachRequired}, {"podInfoOnMount", s.PodInfoOnMount},
		{"storageCapacity", s.StorageCapacity},
	} {
		if f.v == nil {
			errs = append(errs, field.Required(p.Child(f.name), ""))
		}
	}
	if s.FSGroupPolicy != nil {
		switch *s.FSGroupPolicy {
		case storagev1.ReadWriteOnceWithFSTypeFSGroupPolicy, storagev1.FileFSGroupPolicy, storagev1.NoneFSGroupPolicy:
		default:
			errs = append(errs, field.NotSupported(p.Child("fsGroupPolicy"), *s.FSGroupPolicy,
				[]string{"File", "None", "ReadWriteOnceWithFSType"}))
		}
	}
	errs = append(errs, validateTokenRequests(p.Child("tokenRequests"), s.TokenRequests)...)
	for _, m := range s.VolumeLifecycleModes {
		if m != storagev1.VolumeLifecyclePersistent && m != storagev1.VolumeLifecycleEphemeral {
			errs = append(errs, field.NotSupported(p.Child("volumeLifecycleModes"), m, []string{"Persistent", "Ephemeral"}))
		}
	}
	if s.SELinuxMount == nil {
		errs = append(errs, field.Required(p.Child("seLinuxMount"), ""))
	}
	if v := s.NodeAllocatableUpdatePeriodSeconds; v != nil && *v < 10 {
		errs = append(errs, field.Invalid(p.Child("nodeAllocatableUpdatePeriodSeconds"), *v, "must be greater than or equal to 10 seconds"))
	}
	if v := s.ServiceAccountTokenInSecrets; v != nil && len(s.TokenRequests) == 0 {
		errs = append(errs, field.Invalid(p.Child("serviceAccountTokenInSecrets"), v,
			"serviceAccountTokenInSecrets is set but no tokenRequests are specified"))
	}
	if s.PreventPodSchedulingIfMissing == nil {
		errs = append(errs, field.Required(p.Child("preventPodSchedulingIfMissing"), ""))
	}
	return errs
}

// validateTokenRequests: audiences are unique, and expirations between 10
// minutes and 2^32 seconds.
func validateTokenRequests(p *field.Path, reqs []storagev1.TokenRequest) field.ErrorList {
	var errs field.ErrorList
	audiences := sets.New[string]()
	for i, r := range reqs {
		ip := p.Index(i)
		if audiences.Has(r.Audience) {
			errs = append(errs, field.Duplicate(ip.Child("audience"), r.Audience))
			continue
		}
		audiences.Insert(r.Audience)
		if r.ExpirationSeconds == nil {
			continue
		}
		if e := *r.ExpirationSeconds; e < 600 {
			errs = append(errs, field.Invalid(ip.Child("expirationSeconds"), e, "may not specify a duration less than 10 minutes"))
		} else if e > 1<<32 {
			errs = append(errs, field.Invalid(ip.Child("expirationSeconds"), e, "may not specify a duration larger than 2^32 seconds"))
		}
	}
	return errs
}

// validateCSIDriverUpdate: attachRequired (reported as
// spec.attachedRequired, as kube-apiserver spells it) and
// volumeLifecycleModes never change.
func validateCSIDriverUpdate(d, old *storagev1.CSIDriver) field.ErrorList {
	errs := strategy.ValidateMetaUpdate(&d.ObjectMeta, &old.ObjectMeta)
	errs = append(errs, validateCSIDriverSpec(&d.Spec)...)
	errs = append(errs, apivalidation.ValidateImmutableField(d.Spec.AttachRequired, old.Spec.AttachRequired, strategy.SpecPath.Child("attachedRequired"))...)
	return append(errs, apivalidation.ValidateImmutableField(d.Spec.VolumeLifecycleModes, old.Spec.VolumeLifecycleModes, strategy.SpecPath.Child("volumeLifecycleModes"))...)
}
