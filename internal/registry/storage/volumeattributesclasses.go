package storage

import (
	storagev1 "k8s.io/api/storage/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/printers"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

func volumeAttributesClassesResource() *registry.Resource {
	return &registry.Resource{
		Group: Group, Version: "v1", Resource: "volumeattributesclasses", Kind: "VolumeAttributesClass",
		ListKind: "VolumeAttributesClassList", Singular: "volumeattributesclass", ShortNames: []string{"vac"},
		ReturnDeletedObject: true, // as kube-apiserver: DELETE answers the deleted object
		NoGeneration:        true,
		New:                 func() runtime.Object { return &storagev1.VolumeAttributesClass{} },
		NewList:             func() runtime.Object { return &storagev1.VolumeAttributesClassList{} },
		Strategy: strategy.Typed[*storagev1.VolumeAttributesClass]{
			ValidateNew: func(c *storagev1.VolumeAttributesClass) field.ErrorList {
				errs := strategy.ValidateMeta(&c.ObjectMeta, false, apivalidation.NameIsDNSSubdomain)
				return append(errs, validateVolumeAttributesClass(c)...)
			},
			ValidateChange: func(c, old *storagev1.VolumeAttributesClass) field.ErrorList {
				errs := strategy.ValidateMetaUpdate(&c.ObjectMeta, &old.ObjectMeta)
				if c.DriverName != old.DriverName {
					errs = append(errs, field.Forbidden(field.NewPath("driverName"), "updates to driverName are forbidden."))
				}
				if !apiequality.Semantic.DeepEqual(c.Parameters, old.Parameters) {
					errs = append(errs, field.Forbidden(field.NewPath("parameters"), "updates to parameters are forbidden."))
				}
				return append(errs, validateVolumeAttributesClass(c)...)
			},
		},
		Attrs:           strategy.Attrs(false, strategy.NamespaceField[*storagev1.VolumeAttributesClass]),
		FieldLabelError: strategy.UnknownFieldLabel,
		Table:           printers.For(Group, "VolumeAttributesClass"),
	}
}

func validateVolumeAttributesClass(c *storagev1.VolumeAttributesClass) field.ErrorList {
	errs := provisioner(field.NewPath("driverName"), c.DriverName)
	return append(errs, parameters(field.NewPath("parameters"), c.Parameters, false)...)
}
