// Package validatingadmissionpolicy is kube-apiserver's
// ValidatingAdmissionPolicy admission plugin: every
// ValidatingAdmissionPolicy bound by a ValidatingAdmissionPolicyBinding is
// evaluated on the writes it matches (matchConstraints, then the binding's
// matchResources; matchConditions), once per param the binding selects
// (paramKind/paramRef), and its failed validations act as the binding's
// validationActions say: Deny refuses the write with kube-apiserver's
// message, status code and reason, Warn sends a Warning header, Audit
// records the audit annotation
// validation.policy.admission.k8s.io/validation_failure; auditAnnotations
// become audit annotations `<policy>/<key>`. failurePolicy decides what an
// error (an expression's, a missing param's, a binding's configuration)
// does.
//
// Policies and bindings are read from the server's watch caches and each
// policy is compiled once per generation (Plugin keeps the compiled
// policies, a cache of what the stored objects say). Writes of the policy
// resources themselves are never evaluated, as in kube-apiserver.
// Creates, updates and deletes are evaluated (a delete's oldObject is the
// object being deleted).
package validatingadmissionpolicy
