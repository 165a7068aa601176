// Package defaultstorageclass is the DefaultStorageClass admission plugin,
// after Kubernetes' plugin/pkg/admission/storage/storageclass/setdefault:
// a PersistentVolumeClaim created without a class (neither
// spec.storageClassName nor the beta annotation
// volume.beta.kubernetes.io/storage-class) gets the default StorageClass,
// the newest of the classes annotated
// storageclass.kubernetes.io/is-default-class=true (or the beta
// annotation), by name on a tie. Without a default class the claim is left
// as it is; a failed read of the classes is a 403.
package defaultstorageclass
