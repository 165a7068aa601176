package storage

import (
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/printers"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

func csiNodesResource() *registry.Resource {
	return &registry.Resource{
		Group: Group, Version: "v1", Resource: "csinodes", Kind: "CSINode", ListKind: "CSINodeList",
		Singular: "csinode", NoGeneration: true,
		ReturnDeletedObject:   true, // as kube-apiserver: DELETE answers the deleted object
		NoUnconditionalUpdate: true, // as kube-apiserver: a PUT must name a resourceVersion
		New:                   func() runtime.Object { return &storagev1.CSINode{} },
		NewList:               func() runtime.Object { return &storagev1.CSINodeList{} },
		Strategy: strategy.Typed[*storagev1.CSINode]{
			PrepareCreate: func(n *storagev1.CSINode) { n.Status = storagev1.CSINodeStatus{} },
			PrepareUpdate: func(n, old *storagev1.CSINode) { n.Status = old.Status },
			ValidateNew: func(n *storagev1.CSINode) field.ErrorList {
				errs := strategy.ValidateMeta(&n.ObjectMeta, false, apivalidation.NameIsDNSSubdomain)
				return append(errs, validateCSINodeDrivers(strategy.SpecPath.Child("drivers"), n.Spec.Drivers)...)
			},
			ValidateChange: validateCSINodeUpdate,
		},
		Status: strategy.TypedStatus[*storagev1.CSINode]{
			PrepareUpdate: func(n, old *storagev1.CSINode) {
				n.Spec = old.Spec
				strategy.ResetMetaForStatus(&n.ObjectMeta, &old.ObjectMeta)
				// status.storageHealth belongs to the CSIVolumeHealth
				// feature, off by default in v1.37: it is dropped unless
				// the stored object already has it.
				if len(old.Status.StorageHealth) == 0 {
					n.Status.StorageHealth = nil
				}
			},
			ValidateChange: validateCSINodeStatusUpdate,
		},
		Attrs:           strategy.Attrs(false, strategy.NamespaceField[*storagev1.CSINode]),
		FieldLabelError: strategy.UnknownFieldLabel,
		Table:           printers.For(Group, "CSINode"),
	}
}

func validateCSINodeDrivers(p *field.Path, drivers []storagev1.CSINodeDriver) field.ErrorList {
	var errs field.ErrorList
	names := sets.New[string]()
	for i, d := range drivers {
		dp := p.Index(i)
		errs = append(errs, csiDriverName(dp.Child("name"), d.Name)...)
		if d.NodeID == "" {
			errs = append(errs, field.Required(dp.Child("nodeID"), d.NodeID))
		}
		if len(d.NodeID) > maxCSINodeIDLength {
			errs = append(errs, field.Invalid(dp.Child("nodeID"), d.NodeID, "must be 256 characters or less"))
		}
		if a := d.Allocatable; a != nil && a.Count != nil {
			errs = append(errs, apivalidation.ValidateNonnegativeField(int64(*a.Count), dp.Child("allocatable", "count"))...)
		}
		if names.Has(d.Name) {
			errs = append(errs, field.Duplicate(dp.Child("name"), d.Name))
		}
		names.Insert(d.Name)
		keys := sets.New[string]()
		for _, k := range d.TopologyKeys {
			if k == "" {
				errs = append(errs, field.Required(dp, k))
			}
			if keys.Has(k) {
				errs = append(errs, field.Duplicate(dp, k))
			}
			keys.Insert(k)
			errs = append(errs, strategy.Check(dp, k, validation.IsQualifiedName)...)
		}
	}
	return errs
}

// validateCSINodeUpdate: a driver entry keeps everything but its
// allocatable count.
func validateCSINodeUpdate(n, old *storagev1.CSINode) field.ErrorList {
	errs := strategy.ValidateMetaUpdate(&n.ObjectMeta, &old.ObjectMeta)
	errs = append(errs, validateCSINodeDrivers(strategy.SpecPath.Child("drivers"), n.Spec.Drivers)...)
	for _, o := range old.Spec.Drivers {
		for _, d := range n.Spec.Drivers {
			if o.Name != d.Name {
				continue
			}
			if a, b := immutableDriver(d), immutableDriver(o); !apiequality.Semantic.DeepEqual(a, b) {
				errs = append(errs, field.Invalid(strategy.SpecPath.Child("drivers"), a, "field is immutable"))
			}
		}
	}
	return errs
}

// csiNodeDriver is what of a driver entry may not change, with the field
// names kube-apiserver's message shows (those of its internal type:
// {"Name":…,"NodeID":…,"TopologyKeys":…,"Allocatable":null}).
type csiNodeDriver struct {
	Name         string
	NodeID       string
	TopologyKeys []string
	Allocatable  *struct{ Count *int32 }
}

func immutableDriver(d storagev1.CSINodeDriver) csiNodeDriver {
	return csiNodeDriver{Name: d.Name, NodeID: d.NodeID, TopologyKeys: d.TopologyKeys}
}

func validateCSINodeStatusUpdate(n, old *storagev1.CSINode) field.ErrorList {
	errs := strategy.ValidateMetaUpdate(&n.ObjectMeta, &old.ObjectMeta)
	p := field.NewPath("status", "storageHealth")
	seen := sets.New[string]()
	for i, h := range n.Status.StorageHealth {
		hp := p.Index(i)
		if seen.Has(h.Name) {
			errs = append(errs, field.Duplicate(hp, h.Name))
		}
		seen.Insert(h.Name)
		errs = append(errs, validateStorageHealth(hp, &h)...)
	}
	return errs
}

func validateStorageHealth(p *field.Path, h *storagev1.StorageHealth) field.ErrorList {
	errs := csiDriverName(p.Child("name"), h.Name)
	if len(h.HealthConditions) > 16 {
		return append(errs, field.TooMany(p.Child("healthConditions"), len(h.HealthConditions), 16))
	}
	for i, c := range h.HealthConditions {
		cp := p.Child("healthConditions").Index(i)
		if c.Status != storagev1.StorageUnreachable && c.Status != storagev1.StorageDegraded {
			errs = append(errs, field.NotSupported(cp.Child("status"), c.Status, []string{"Degraded", "Unreachable"}))
		}
		if c.Reason == "" {
			errs = append(errs, field.Required(cp.Child("reason"), ""))
		} else {
			for _, msg := range metav1validation.IsValidConditionReason(c.Reason) {
				errs = append(errs, field.Invalid(cp.Child("reason"), c.Reason, msg))
			}
			if len(c.Reason) > 256 {
				errs = append(errs, field.TooLong(cp.Child("reason"), c.Reason, 256))
			}
		}
		if len(c.Message) > 1024 {
			errs = append(errs, field.TooLong(cp.Child("message"), c.Message, 1024))
		}
		if m := c.AccessMode; m != nil {
			switch *m {
			case corev1.ReadWriteOnce, corev1.ReadOnlyMany, corev1.ReadWriteMany, corev1.ReadWriteOncePod:
			default:
				errs = append(errs, field.NotSupported(cp.Child("accessMode"), *m, []string{"ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"}))
			}
		}
		if m := c.VolumeMode; m != nil && *m != corev1.PersistentVolumeFilesystem && *m != corev1.PersistentVolumeBlock {
			errs = append(errs, field.NotSupported(cp.Child("volumeMode"), *m, []string{"Filesystem", "Block"}))
		}
	}
	return errs
}
