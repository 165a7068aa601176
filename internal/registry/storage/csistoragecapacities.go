package storage

import (
	storagev1 "k8s.io/api/storage/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/printers"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

func csiStorageCapacitiesResource() *registry.Resource {
	return &registry.Resource{
		Group: Group, Version: "v1", Resource: "csistoragecapacities", Kind: "CSIStorageCapacity",
		ListKind: "CSIStorageCapacityList", Singular: "csistoragecapacity", Namespaced: true,
		NoUnconditionalUpdate: true, // as kube-apiserver: a PUT must name a resourceVersion
		NoGeneration:          true,
		New:                   func() runtime.Object { return &storagev1.CSIStorageCapacity{} },
		NewList:               func() runtime.Object { return &storagev1.CSIStorageCapacityList{} },
		Strategy: strategy.Typed[*storagev1.CSIStorageCapacity]{
			ValidateNew: func(c *storagev1.CSIStorageCapacity) field.ErrorList {
				errs := strategy.ValidateMeta(&c.ObjectMeta, true, apivalidation.NameIsDNSSubdomain)
				return append(errs, validateCSIStorageCapacity(c)...)
			},
			ValidateChange: validateCSIStorageCapacityUpdate,
		},
		Attrs:           strategy.Attrs[*storagev1.CSIStorageCapacity](true, nil),
		FieldLabelError: strategy.UnknownFieldLabel,
		// kube-apiserver has no printer for the kind: Name and Created At.
		Table: printers.For(Group, "CSIStorageCapacity"),
	}
}

func validateCSIStorageCapacity(c *storagev1.CSIStorageCapacity) field.ErrorList {
	errs := metav1validation.ValidateLabelSelector(c.NodeTopology, metav1validation.LabelSelectorValidationOptions{}, field.NewPath("nodeTopology"))
	errs = append(errs, strategy.Check(field.NewPath("storageClassName"), c.StorageClassName, validation.IsDNS1123Subdomain)...)
	if c.Capacity != nil && c.Capacity.Sign() < 0 {
		errs = append(errs, field.Invalid(field.NewPath("capacity"), c.Capacity.String(), "must be greater than or equal to 0"))
	}
	return errs
}

// validateCSIStorageCapacityUpdate: nodeTopology and storageClassName are
// the inputs of the capacity query and never change.
func validateCSIStorageCapacityUpdate(c, old *storagev1.CSIStorageCapacity) field.ErrorList {
	errs := strategy.ValidateMetaUpdate(&c.ObjectMeta, &old.ObjectMeta)
	errs = append(errs, validateCSIStorageCapacity(c)...)
	if !apiequality.Semantic.DeepEqual(c.NodeTopology, old.NodeTopology) {
		errs = append(errs, field.Invalid(field.NewPath("nodeTopology"), c.NodeTopology, "field is immutable"))
	}
	if c.StorageClassName != old.StorageClassName {
		errs = append(errs, field.Invalid(field.NewPath("storageClassName"), c.StorageClassName, "field is immutable"))
	}
	return errs
}
