package core

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/setpoint-dev/setpoint/internal/quota"
	"github.com/setpoint-dev/setpoint/internal/registry"
)

// pvcQuota is the claims' part in ResourceQuota, as Kubernetes' PVC
// evaluator: persistentvolumeclaims and count/persistentvolumeclaims,
// requests.storage (the larger of the request and the allocated size),
// and the same per storage class as
// <class>.storageclass.storage.k8s.io/{persistentvolumeclaims,requests.storage}.
type pvcQuota struct{}

const storageClassQuotaSuffix = ".storageclass.storage.k8s.io/"

var pvcQuotaNames = []corev1.ResourceName{
	corev1.ResourcePersistentVolumeClaims, "count/persistentvolumeclaims", corev1.ResourceRequestsStorage,
}

func (pvcQuota) MatchingResources(names []corev1.ResourceName) []corev1.ResourceName {
	out := quota.Intersection(names, pvcQuotaNames)
	for _, n := range names {
		s := string(n)
		if strings.HasSuffix(s, storageClassQuotaSuffix+string(corev1.ResourcePersistentVolumeClaims)) ||
			strings.HasSuffix(s, storageClassQuotaSuffix+string(corev1.ResourceRequestsStorage)) {
			out = append(out, n)
		}
	}
	return out
}

func (pvcQuota) Usage(obj runtime.Object, _ time.Time) (corev1.ResourceList, error) {
	pvc, ok := obj.(*corev1.PersistentVolumeClaim)
	if !ok {
		return nil, fmt.Errorf("persistentvolumeclaim quota: unexpected %T", obj)
	}
	one := *resource.NewQuantity(1, resource.DecimalSI)
	out := corev1.ResourceList{corev1.ResourcePersistentVolumeClaims: one, "count/persistentvolumeclaims": one.DeepCopy()}
	class := pvcClass(pvc)
	if class != "" {
		out[corev1.ResourceName(class+storageClassQuotaSuffix+string(corev1.ResourcePersistentVolumeClaims))] = one.DeepCopy()
	}
	req, found := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
	if alloc, ok := pvc.Status.AllocatedResources[corev1.ResourceStorage]; ok && (!found || alloc.Cmp(req) > 0) {
		req, found = alloc, true
	}
	if found {
		out[corev1.ResourceRequestsStorage] = req.DeepCopy()
		if class != "" {
			out[corev1.ResourceName(class+storageClassQuotaSuffix+string(corev1.ResourceRequestsStorage))] = req.DeepCopy()
		}
	}
	return out, nil
}

// pvcClass is the claim's storage class: the beta annotation, else
// spec.storageClassName.
func pvcClass(pvc *corev1.PersistentVolumeClaim) string {
	if c, ok := pvc.Annotations[corev1.BetaStorageClassAnnotation]; ok {
		return c
	}
	if pvc.Spec.StorageClassName != nil {
		return *pvc.Spec.StorageClassName
	}
	return ""
}

// MatchesScope: VolumeAttributesClass, against the class the claim asks
// for, has, or is being modified to.
func (pvcQuota) MatchesScope(sel corev1.ScopedResourceSelectorRequirement, obj runtime.Object) (bool, error) {
	pvc, ok := obj.(*corev1.PersistentVolumeClaim)
	if !ok {
		return false, fmt.Errorf("persistentvolumeclaim quota: unexpected %T", obj)
	}
	if sel.ScopeName != corev1.ResourceQuotaScopeVolumeAttributesClass {
		return false, nil
	}
	var classes []string
	if c := pvc.Spec.VolumeAttributesClassName; c != nil && *c != "" {
		classes = append(classes, *c)
	}
	if c := pvc.Status.CurrentVolumeAttributesClassName; c != nil && *c != "" {
		classes = append(classes, *c)
	}
	if m := pvc.Status.ModifyVolumeStatus; m != nil && m.TargetVolumeAttributesClassName != "" {
		classes = append(classes, m.TargetVolumeAttributesClassName)
	}
	if len(classes) == 0 {
		return scopeSelectorMatches(sel, "")
	}
	for _, c := range classes {
		if ok, err := scopeSelectorMatches(sel, c); err != nil || ok {
			return ok, err
		}
	}
	return false, nil
}

func (pvcQuota) Constraints([]corev1.ResourceName, runtime.Object) error { return nil }

// Handles: creates and updates of the claim (an expansion).
func (pvcQuota) Handles(op registry.Operation, sub string) bool {
	return sub == "" && (op == registry.Create || op == registry.Update)
}
