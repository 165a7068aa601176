// Package podspec holds the rules of pod specs that pods and every workload
// template share: Kubernetes' defaults (DefaultPodSpec for templates,
// DefaultPod for pods), validation with kube-apiserver's field paths and
// messages (ValidatePodSpec, ValidatePodTemplate, and
// ValidateSelectorAndTemplate for workloads; every volume source in
// volumes_sources.go and volumes_legacy.go, projected volumes source by
// source in volumes_projected.go, an ephemeral volume's claim template
// with ValidateClaimSpec, which the PersistentVolumeClaim kind shares),
// the declared defaults of volume sources, the fields a pod's
// PrepareForCreate and PrepareForUpdate drop while their feature gate is
// off by default (DropDisabledFields), the QoS class (QOS), the
// replica counters of workload status (ReplicaCounts), and the warnings
// kube-apiserver sends about a pod's or a template's spec (PodWarnings,
// TemplateWarnings, NameWarning; warnings*.go), which the pod and
// workload kinds return from their Warn hooks.
package podspec
