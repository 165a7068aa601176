// Package storageobjectinuseprotection is the StorageObjectInUseProtection
// admission plugin, after Kubernetes'
// plugin/pkg/admission/storage/storageobjectinuseprotection: every new
// PersistentVolumeClaim gets the finalizer kubernetes.io/pvc-protection and
// every new PersistentVolume kubernetes.io/pv-protection (unless present).
// The pvc-protection and pv-protection controllers remove them once
// nothing uses the object, so that a claim in use by a pod, or a volume
// bound to a claim, is not removed under it.
package storageobjectinuseprotection
