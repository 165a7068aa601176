// Package limitranger is the LimitRanger admission's logic: what the
// LimitRanges of a namespace default in a pod (each container's limits
// from default, requests from defaultRequest, recorded in the annotation
// kubernetes.io/limit-ranger) and what they refuse in pods (Container and
// Pod min, max, maxLimitRequestRatio) and claims (PersistentVolumeClaim
// min and max storage), worded as Kubernetes' plugin/pkg/admission/limitranger.
//
// It reads nothing: the kinds' admission hooks (pods and claims, in
// internal/registry/core) list the namespace's LimitRanges and call it, on
// pod creates and on claim creates and updates, as kube-apiserver's
// LimitRanger, which runs among the mutating admission plugins, before the
// kinds' other admission and before ResourceQuota.
package limitranger
