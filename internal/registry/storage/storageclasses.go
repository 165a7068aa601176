package storage

import (
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/printers"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

func storageClassesResource() *registry.Resource {
	return &registry.Resource{
		Group: Group, Version: "v1", Resource: "storageclasses", Kind: "StorageClass", ListKind: "StorageClassList",
		Singular: "storageclass", ShortNames: []string{"sc"},
		ReturnDeletedObject: true, // as kube-apiserver: DELETE answers the deleted object
		NoGeneration:        true,
		New:                 func() runtime.Object { return &storagev1.StorageClass{} },
		NewList:             func() runtime.Object { return &storagev1.StorageClassList{} },
		Strategy: strategy.Typed[*storagev1.StorageClass]{
			Defaults:       defaultStorageClass,
			ValidateNew:    validateStorageClass,
			ValidateChange: validateStorageClassUpdate,
		},
		Attrs:           strategy.Attrs(false, strategy.NamespaceField[*storagev1.StorageClass]),
		FieldLabelError: strategy.UnknownFieldLabel,
		Table:           printers.For(Group, "StorageClass"),
	}
}

func defaultStorageClass(sc *storagev1.StorageClass) {
	if sc.ReclaimPolicy == nil {
		sc.ReclaimPolicy = new(corev1.PersistentVolumeReclaimDelete)
	}
	if sc.VolumeBindingMode == nil {
		sc.VolumeBindingMode = new(storagev1.VolumeBindingImmediate)
	}
}

func validateStorageClass(sc *storagev1.StorageClass) field.ErrorList {
	errs := strategy.ValidateMeta(&sc.ObjectMeta, false, apivalidation.NameIsDNSSubdomain)
	return append(errs, validateStorageClassSpec(sc)...)
}

func validateStorageClassSpec(sc *storagev1.StorageClass) field.ErrorList {
	var errs field.ErrorList
	if sc.Provisioner != "" {
		errs = provisioner(field.NewPath("provisioner"), sc.Provisioner)
	}
	errs = append(errs, parameters(field.NewPath("parameters"), sc.Parameters, true)...)
	if p := sc.ReclaimPolicy; p != nil && *p != "" {
		errs = append(errs, strategy.ValidateEnum(field.NewPath("reclaimPolicy"), *p,
			corev1.PersistentVolumeReclaimDelete, corev1.PersistentVolumeReclaimRetain)...)
	}
	bindingPath := field.NewPath("volumeBindingMode")
	if sc.VolumeBindingMode == nil {
		errs = append(errs, field.Required(bindingPath, ""))
	} else if m := *sc.VolumeBindingMode; m != storagev1.VolumeBindingImmediate && m != storagev1.VolumeBindingWaitForFirstConsumer {
		errs = append(errs, field.NotSupported(bindingPath, m, []string{
			string(storagev1.VolumeBindingImmediate), string(storagev1.VolumeBindingWaitForFirstConsumer)}))
	}
	errs = append(errs, validateAllowedTopologies(field.NewPath("allowedTopologies"), sc.AllowedTopologies)...)
	if sc.Provisioner == "" {
		// Last, as kube-apiserver's declarative validation reports it.
		errs = append(errs, field.Required(field.NewPath("provisioner"), ""))
	}
	return errs
}

// validateAllowedTopologies checks each term's label requirements (a
// label key, one value at least, no value or key twice) and that no term
// repeats another. As kube-apiserver's, the terms seen start as one empty
// term per term of the list, so an empty term is a duplicate; a term is
// reported once however many it repeats (kube-apiserver drops the
// identical errors).
func validateAllowedTopologies(p *field.Path, terms []corev1.TopologySelectorTerm) field.ErrorList {
	var errs field.ErrorList
	seen := make([]map[string]sets.Set[string], len(terms))
	for i, term := range terms {
		exprs := map[string]sets.Set[string]{}
		for j, req := range term.MatchLabelExpressions {
			rp := p.Index(i).Child("matchLabelExpressions").Index(j)
			values := sets.New[string]()
			if len(req.Values) == 0 {
				errs = append(errs, field.Required(rp.Child("values"), ""))
			}
			for k, v := range req.Values {
				if values.Has(v) {
					errs = append(errs, field.Duplicate(rp.Child("values").Index(k), v))
				}
				values.Insert(v)
			}
			errs = append(errs, metav1validation.ValidateLabelName(req.Key, rp.Child("key"))...)
			if _, dup := exprs[req.Key]; dup {
				errs = append(errs, field.Duplicate(rp.Child("key"), req.Key))
			}
			exprs[req.Key] = values
		}
		for _, other := range seen {
			if apiequality.Semantic.DeepEqual(exprs, other) {
				errs = append(errs, field.Duplicate(p.Index(i).Child("matchLabelExpressions"), ""))
				break
			}
		}
		seen = append(seen, exprs)
	}
	return errs
}

// validateStorageClassUpdate: provisioner, parameters, reclaimPolicy and
// volumeBindingMode never change; allowVolumeExpansion, mountOptions and
// allowedTopologies may.
func validateStorageClassUpdate(sc, old *storagev1.StorageClass) field.ErrorList {
	errs := strategy.ValidateMetaUpdate(&sc.ObjectMeta, &old.ObjectMeta)
	errs = append(errs, validateStorageClassSpec(sc)...)
	if sc.Provisioner != old.Provisioner {
		errs = append(errs, immutable(field.NewPath("provisioner")))
	}
	if !apiequality.Semantic.DeepEqual(sc.Parameters, old.Parameters) {
		errs = append(errs, immutable(field.NewPath("parameters")))
	}
	if !apiequality.Semantic.DeepEqual(sc.ReclaimPolicy, old.ReclaimPolicy) {
		errs = append(errs, immutable(field.NewPath("reclaimPolicy")))
	}
	if !apiequality.Semantic.DeepEqual(sc.VolumeBindingMode, old.VolumeBindingMode) {
		errs = append(errs, immutable(field.NewPath("volumeBindingMode")))
	}
	return errs
}
