package core

import (
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/printers"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

func configMapsResource() *registry.Resource {
	return &registry.Resource{
		Version: "v1", Resource: "configmaps", Kind: "ConfigMap", ListKind: "ConfigMapList", Singular: "configmap",
		ShortNames: []string{"cm"}, Namespaced: true,
		DefaultFieldLabels: true,
		NoGeneration:       true, // as kube-apiserver: no metadata.generation
		New:                func() runtime.Object { return &corev1.ConfigMap{} },
		NewList:            func() runtime.Object { return &corev1.ConfigMapList{} },
		Strategy: strategy.Typed[*corev1.ConfigMap]{
			ValidateNew:    validateConfigMap,
			ValidateChange: validateConfigMapUpdate,
		},
		Attrs: strategy.Attrs[*corev1.ConfigMap](true, nil),
		Table: printers.For("", "ConfigMap"),
	}
}

var (
	dataPath       = field.NewPath("data")
	binaryDataPath = field.NewPath("binaryData")
	immutablePath  = field.NewPath("immutable")
)

func validateConfigMap(cm *corev1.ConfigMap) field.ErrorList {
	errs := strategy.ValidateMeta(&cm.ObjectMeta, true, apivalidation.NameIsDNSSubdomain)
	size := 0
	for _, k := range strategy.SortedKeys(cm.Data) {
		errs = append(errs, validateDataKey(dataPath, k)...)
		if _, dup := cm.BinaryData[k]; dup {
			errs = append(errs, field.Invalid(dataPath.Key(k), k, "duplicate of key present in binaryData"))
		}
		size += len(cm.Data[k])
	}
	for _, k := range strategy.SortedKeys(cm.BinaryData) {
		errs = append(errs, validateDataKey(binaryDataPath, k)...)
		size += len(cm.BinaryData[k])
	}
	if size > corev1.MaxSecretSize {
		errs = append(errs, field.TooLong(dataPath, "", corev1.MaxSecretSize))
	}
	return errs
}

// validateDataKey checks a configmap or secret key.
func validateDataKey(p *field.Path, key string) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsConfigMapKey(key) {
		errs = append(errs, field.Invalid(p.Key(key), key, msg))
	}
	return errs
}

func validateConfigMapUpdate(cm, old *corev1.ConfigMap) field.ErrorList {
	errs := strategy.ValidateMetaUpdate(&cm.ObjectMeta, &old.ObjectMeta)
	if strategy.IsTrue(old.Immutable) {
		errs = append(errs, validateImmutableData(cm.Immutable, !apiequality.Semantic.DeepEqual(cm.Data, old.Data), dataPath)...)
		if !apiequality.Semantic.DeepEqual(cm.BinaryData, old.BinaryData) {
			errs = append(errs, field.Forbidden(binaryDataPath, "field is immutable when `immutable` is set"))
		}
	}
	return append(errs, validateConfigMap(cm)...)
}

// validateImmutableData is the check of an update to an object marked
// immutable: it stays immutable, and its data does not change.
func validateImmutableData(immutable *bool, dataChanged bool, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if !strategy.IsTrue(immutable) {
		errs = append(errs, field.Forbidden(immutablePath, "field is immutable when `immutable` is set"))
	}
	if dataChanged {
		errs = append(errs, field.Forbidden(p, "field is immutable when `immutable` is set"))
	}
	return errs
}
