// Package policies is the differential test of the admission policies:
// the same ValidatingAdmissionPolicies and MutatingAdmissionPolicies with
// their bindings, and the same objects, sent to the reference
// kube-apiserver v1.37.2 with kube-controller-manager (one started for the
// run, or the running one SETPOINT_REFERENCE_KUBECONFIG names:
// refcluster.Use) and to setpoint (testenv), comparing what a client sees: the code, the Status
// reason, message and causes, the Warning headers, the mutated object.
//
// On the reference everything lives in the namespace policies-diff and in
// cluster-scoped names starting policies-diff-, and every policy is scoped
// by a namespaceSelector on the label setpoint-helper=policies and an
// objectSelector on its own case label, so no other user's object is ever
// evaluated; all of it is deleted afterwards.
package policies
