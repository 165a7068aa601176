package core

import (
	"context"
	"errors"
	"slices"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// The finalizers kube-apiserver's StorageObjectInUseProtection admission
// adds to every new claim and volume; the pvc-protection and pv-protection
// controllers of the controller manager remove them once nothing uses the
// object.
const (
	PVCProtectionFinalizer = "kubernetes.io/pvc-protection"
	PVProtectionFinalizer  = "kubernetes.io/pv-protection"
)

var pvsGR = corev1.SchemeGroupVersion.WithResource("persistentvolumes").GroupResource()

// addFinalizer appends f to fins unless present.
func addFinalizer(fins []string, f string) []string {
	if slices.Contains(fins, f) {
		return fins
	}
	return append(fins, f)
}

// admitPV is StorageObjectInUseProtection for volumes: a new volume gets
// the pv-protection finalizer.
func admitPV(_ context.Context, _ registry.Env, a *registry.Attributes) (*registry.Txn, error) {
	pv, ok := a.Object.(*corev1.PersistentVolume)
	if ok && a.Operation == registry.Create && a.Subresource == "" {
		pv.Finalizers = addFinalizer(pv.Finalizers, PVProtectionFinalizer)
	}
	return nil, nil
}

// admitPVC runs kube-apiserver's admissions of claims, in its plugin
// order: DefaultStorageClass and StorageObjectInUseProtection on create,
// PersistentVolumeClaimResize on update.
func admitPVC(ctx context.Context, env registry.Env, a *registry.Attributes) (*registry.Txn, error) {
	c, ok := a.Object.(*corev1.PersistentVolumeClaim)
	if !ok || a.Subresource != "" {
		return nil, nil
	}
	switch a.Operation {
	case registry.Create:
		if err := defaultStorageClass(ctx, env, c); err != nil {
			return nil, err
		}
		c.Finalizers = addFinalizer(c.Finalizers, PVCProtectionFinalizer)
	case registry.Update:
		old, ok := a.Old.(*corev1.PersistentVolumeClaim)
		if !ok {
			return nil, nil
		}
		if err := admitPVCResize(ctx, env, c, old); err != nil {
			return nil, err
		}
	}
	return nil, nil
}

// admitPVCResize is PersistentVolumeClaimResize: a claim's storage request
// may only grow while it is bound and when its class (unchanged) allows
// volume expansion.
func admitPVCResize(ctx context.Context, env registry.Env, c, old *corev1.PersistentVolumeClaim) error {
	newSize, oldSize := c.Spec.Resources.Requests[corev1.ResourceStorage], old.Spec.Resources.Requests[corev1.ResourceStorage]
	if newSize.Cmp(oldSize) <= 0 {
		return nil
	}
	if old.Status.Phase != corev1.ClaimBound {
		return apierrors.NewForbidden(pvcsGR, c.Name, errors.New("Only bound persistent volume claims can be expanded"))
	}
	if !classAllowsResize(ctx, env, c, old) {
		return apierrors.NewForbidden(pvcsGR, c.Name,
			errors.New("only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize"))
	}
	return nil
}

// classAllowsResize reports whether the claim's class, the same before and
// after, exists and sets allowVolumeExpansion.
func classAllowsResize(ctx context.Context, env registry.Env, c, old *corev1.PersistentVolumeClaim) bool {
	name := claimClass(c)
	if name == "" || claimClass(old) != name {
		return false
	}
	classes := env.Objects(storageClassesGVR)
	if classes == nil {
		return false
	}
	obj, err := classes.Get(ctx, "", name)
	if err != nil {
		return false
	}
	sc, ok := obj.(*storagev1.StorageClass)
	return ok && sc.AllowVolumeExpansion != nil && *sc.AllowVolumeExpansion
}

// claimClass is the claim's class: the beta annotation, else the field.
func claimClass(c *corev1.PersistentVolumeClaim) string {
	if v, ok := c.Annotations[betaStorageClassAnnotation]; ok {
		return v
	}
	if c.Spec.StorageClassName != nil {
		return *c.Spec.StorageClassName
	}
	return ""
}
