// Package limitranger is the LimitRanger admission's logic: what the
// LimitRanges of a namespace default in a pod (each container's limits
// from default, requests from defaultRequest, recorded in the annotation
// kubernetes.io/limit-ranger) and what they refuse in pods (Container and
// Pod min, max, maxLimitRequestRatio) and claims (PersistentVolumeClaim
// min and max storage), worded as Kubernetes' plugin/pkg/admission/limitranger.
//
// Plugin is the LimitRanger admission plugin of the chain (package
// admission): it lists the namespace's LimitRanges and applies DefaultPod
// in the mutating phase on pod creates (second in the chain, before the
// pods' other admission), ValidatePod and ValidateClaim in the validating
// phase (after the strategy's validation, before ResourceQuota) on pod
// creates and claim creates and updates; refusals are 403 naming the
// object. The functions themselves read nothing.
package limitranger
