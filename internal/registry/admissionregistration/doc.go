// Package admissionregistration describes the admissionregistration.k8s.io/v1
// resources: validating and mutating webhook configurations, validating
// admission policies (with status) and their bindings, mutating admission
// policies and their bindings, with kube-apiserver v1.37's defaults,
// validation and printers. The CEL expressions of match conditions and
// policies are compiled and type-checked on write (cel.go), as
// kube-apiserver does.
//
// The objects are stored and served only: calling the webhooks and
// evaluating the policies on other writes is not done here.
package admissionregistration
