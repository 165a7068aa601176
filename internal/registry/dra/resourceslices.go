package dra

import (
	resourcev1 "k8s.io/api/resource/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/printers"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

func resourceSlicesResource() *registry.Resource {
	type slice = resourcev1.ResourceSlice
	return &registry.Resource{
		Group: Group, Version: "v1", Resource: "resourceslices", Kind: "ResourceSlice", ListKind: "ResourceSliceList",
		Singular:            "resourceslice",
		ReturnDeletedObject: true, // as kube-apiserver: DELETE answers the deleted object
		New:                 func() runtime.Object { return &slice{} },
		NewList:             func() runtime.Object { return &resourcev1.ResourceSliceList{} },
		Strategy: strategy.Typed[*slice]{
			PrepareCreate: func(s *slice) { dropDisabledSliceFields(s, nil) },
			PrepareUpdate: func(s, old *slice) { dropDisabledSliceFields(s, old) },
			ValidateNew: func(s *slice) field.ErrorList {
				errs := strategy.ValidateMeta(&s.ObjectMeta, false, apivalidation.NameIsDNSSubdomain)
				return declarativeLast(append(errs, validateSliceSpec(&s.Spec, nil)...))
			},
			ValidateChange: func(s, old *slice) field.ErrorList {
				errs := strategy.ValidateMetaUpdate(&s.ObjectMeta, &old.ObjectMeta)
				return declarativeLast(append(errs, validateSliceSpec(&s.Spec, &old.Spec)...))
			},
		},
		Admit: admitTaintTimes,
		// The field labels kube-apiserver accepts for slices.
		Attrs: strategy.Attrs(false, func(s *slice, set fields.Set) {
			set["spec.nodeName"] = ""
			if s.Spec.NodeName != nil {
				set["spec.nodeName"] = *s.Spec.NodeName
			}
			set["spec.driver"] = s.Spec.Driver
			set["spec.pool.name"] = s.Spec.Pool.Name
		}),
		FieldLabelError: strategy.FieldLabelsOf(resourcev1.SchemeGroupVersion.WithKind("ResourceSlice")),
		Table:           printers.For(Group, "ResourceSlice"),
	}
}

// dropDisabledSliceFields drops what features off by default in v1.37 add
// to a slice, unless the stored slice uses them: list-typed attributes,
// node allocatable resources, the partition type attribute, node
// operations to skip, counter compatibility groups.
func dropDisabledSliceFields(s, old *resourcev1.ResourceSlice) {
	var oldSpec *resourcev1.ResourceSliceSpec
	if old != nil {
		oldSpec = &old.Spec
	}
	if oldSpec == nil || oldSpec.PartitionTypeAttribute == nil {
		s.Spec.PartitionTypeAttribute = nil
	}
	if oldSpec == nil || len(oldSpec.SkipNodeOperations) == 0 {
		s.Spec.SkipNodeOperations = nil
	}
	listAttrs, allocatable, groups := false, false, false
	if oldSpec != nil {
		for _, d := range oldSpec.Devices {
			allocatable = allocatable || len(d.NodeAllocatableResources) > 0
			for _, a := range d.Attributes {
				listAttrs = listAttrs || a.BoolValues != nil || a.IntValues != nil || a.StringValues != nil || a.VersionValues != nil
			}
			for _, c := range d.ConsumesCounters {
				groups = groups || len(c.CompatibilityGroups) > 0
			}
		}
	}
	for i := range s.Spec.Devices {
		d := &s.Spec.Devices[i]
		if !allocatable {
			d.NodeAllocatableResources = nil
		}
		if !groups {
			for j := range d.ConsumesCounters {
				d.ConsumesCounters[j].CompatibilityGroups = nil
			}
		}
		if listAttrs {
			continue
		}
		for k, a := range d.Attributes {
			if a.BoolValues != nil || a.IntValues != nil || a.StringValues != nil || a.VersionValues != nil {
				a.BoolValues, a.IntValues, a.StringValues, a.VersionValues = nil, nil, nil, nil
				d.Attributes[k] = a
			}
		}
	}
}
