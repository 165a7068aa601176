// Package limitranger is the LimitRanger admission's logic: what the
// LimitRanges of a namespace default in a pod (each container's limits
// from default, requests from defaultRequest, recorded in the annotation
// kubernetes.io/limit-ranger) and what they refuse in pods (Container and
// Pod min, max, maxLimitRequestRatio) and claims (PersistentVolumeClaim
// min and max storage), worded as Kubernetes' plugin/pkg/admission/limitranger.
//
// It reads nothing: the kinds' admission hooks (pods and claims, in
// internal/registry/core) list the namespace's LimitRanges and call it, as
// kube-apiserver's LimitRanger: DefaultPod in the pods' mutating admission
// on create (before their other admission), ValidatePod and ValidateClaim
// in their validating admission (after the strategy's validation, before
// ResourceQuota) on pod creates and claim creates and updates.
package limitranger
