package core

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// admitPVC is the claims' own admission, after the server's admission
// chain (DefaultStorageClass, StorageObjectInUseProtection in package
// admission): kube-apiserver's PersistentVolumeClaimResize on update.
func admitPVC(ctx context.Context, env registry.Env, a *registry.Attributes) (*registry.Txn, error) {
	c, ok := a.Object.(*corev1.PersistentVolumeClaim)
	old, okOld := a.Old.(*corev1.PersistentVolumeClaim)
	if !ok || !okOld || a.Subresource != "" || a.Operation != registry.Update {
		return nil, nil
	}
	return nil, admitPVCResize(ctx, env, c, old)
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
