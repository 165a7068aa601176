// Package scheduling describes the scheduling.k8s.io/v1 resources:
// priorityclasses, with kube-apiserver's validation (the reserved
// "system-" names, the highest user-definable value, immutable value and
// preemption policy) and the two system classes that exist from the start.
// The Priority admission plugin (one global default at most) is in
// internal/admission/priority.
package scheduling
