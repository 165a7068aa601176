package volumeutil

import (
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"

	"github.com/setpoint-dev/setpoint/cache"
)

// Annotations of claims and volumes, as Kubernetes names them.
const (
	// AnnBindCompleted on a claim: the binder finished binding it.
	AnnBindCompleted = "pv.kubernetes.io/bind-completed"
	// AnnBoundByController on a claim or volume: the binder (not the
	// user) chose the binding, so it may undo it.
	AnnBoundByController = "pv.kubernetes.io/bound-by-controller"
	// AnnStorageProvisioner and its beta twin on a claim: the provisioner
	// asked to provision a volume for it.
	AnnStorageProvisioner     = "volume.kubernetes.io/storage-provisioner"
	AnnBetaStorageProvisioner = "volume.beta.kubernetes.io/storage-provisioner"
	// AnnSelectedNode on a claim of a WaitForFirstConsumer class: the node
	// the scheduler chose for the first pod using it.
	AnnSelectedNode = "volume.kubernetes.io/selected-node"
	// AnnDynamicallyProvisioned on a volume: the provisioner that made it.
	AnnDynamicallyProvisioned = "pv.kubernetes.io/provisioned-by"
	// AnnBetaStorageClass is the claim's or volume's class before the
	// storageClassName field.
	AnnBetaStorageClass = "volume.beta.kubernetes.io/storage-class"
	// AnnDefaultClass and its beta twin mark the default StorageClass.
	AnnDefaultClass     = "storageclass.kubernetes.io/is-default-class"
	AnnBetaDefaultClass = "storageclass.beta.kubernetes.io/is-default-class"
)

// Finalizers of StorageObjectInUseProtection.
const (
	PVCProtectionFinalizer = "kubernetes.io/pvc-protection"
	PVProtectionFinalizer  = "kubernetes.io/pv-protection"
)

// ClaimClass is the claim's class: the beta annotation, else the field
// ("" for none).
func ClaimClass(c *corev1.PersistentVolumeClaim) string {
	if v, ok := c.Annotations[AnnBetaStorageClass]; ok {
		return v
	}
	if c.Spec.StorageClassName != nil {
		return *c.Spec.StorageClassName
	}
	return ""
}

// VolumeClass is the volume's class: the beta annotation, else the field.
func VolumeClass(pv *corev1.PersistentVolume) string {
	if v, ok := pv.Annotations[AnnBetaStorageClass]; ok {
		return v
	}
	return pv.Spec.StorageClassName
}

// IsDefaultClass reports whether sc is annotated as the default class.
func IsDefaultClass(sc *storagev1.StorageClass) bool {
	return sc.Annotations[AnnDefaultClass] == "true" || sc.Annotations[AnnBetaDefaultClass] == "true"
}

// BoundToClaim reports whether the volume's claimRef names the claim (its
// UID too, when the claimRef has one).
func BoundToClaim(pv *corev1.PersistentVolume, c *corev1.PersistentVolumeClaim) bool {
	r := pv.Spec.ClaimRef
	if r == nil || r.Name != c.Name || r.Namespace != c.Namespace {
		return false
	}
	return r.UID == "" || r.UID == c.UID
}

// IsDelayBinding reports whether the class binds WaitForFirstConsumer.
func IsDelayBinding(sc *storagev1.StorageClass) bool {
	return sc != nil && sc.VolumeBindingMode != nil && *sc.VolumeBindingMode == storagev1.VolumeBindingWaitForFirstConsumer
}

// ClaimNames returns the names of the claims the pod's volumes use: the
// persistentVolumeClaim sources and the claims of generic ephemeral
// volumes (<pod>-<volume>).
func ClaimNames(p *corev1.Pod) []string {
	var names []string
	for _, v := range p.Spec.Volumes {
		switch {
		case v.PersistentVolumeClaim != nil:
			names = append(names, v.PersistentVolumeClaim.ClaimName)
		case v.Ephemeral != nil:
			names = append(names, p.Name+"-"+v.Name)
		}
	}
	return names
}

// PodTerminated reports whether the pod no longer runs and never will
// again (Succeeded or Failed): it no longer uses its volumes.
func PodTerminated(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

// Newer reports whether resourceVersion a is newer than b (both decimal,
// as the server writes them; a non-number is never newer).
func Newer(a, b string) bool {
	x, err1 := strconv.ParseUint(a, 10, 64)
	y, err2 := strconv.ParseUint(b, 10, 64)
	return err1 == nil && err2 == nil && x > y
}

// PodClaimIndex files pods under the keys (namespace/name) of the claims
// their volumes use; AddPodClaimIndex installs it once on a shared pod
// informer's indexer.
const PodClaimIndex = "volumes.setpoint.dev/claim"

// AddPodClaimIndex installs PodClaimIndex on the indexer unless present.
func AddPodClaimIndex(ix *cache.ThreadSafeIndexer[*corev1.Pod]) error {
	if slices.Contains(ix.IndexNames(), PodClaimIndex) {
		return nil
	}
	return ix.AddIndexers(cache.Indexers[*corev1.Pod]{PodClaimIndex: func(p *corev1.Pod) ([]string, error) {
		var keys []string
		for _, name := range ClaimNames(p) {
			keys = append(keys, p.Namespace+"/"+name)
		}
		return keys, nil
	}})
}
