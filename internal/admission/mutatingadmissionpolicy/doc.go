// Package mutatingadmissionpolicy is kube-apiserver's
// MutatingAdmissionPolicy admission plugin (admissionregistration.k8s.io/v1,
// on by default in v1.37): every MutatingAdmissionPolicy bound by a
// MutatingAdmissionPolicyBinding changes the creates and updates it matches
// (matchConstraints, the binding's matchResources, matchConditions), once
// per param the binding selects, with its mutations in order: an
// ApplyConfiguration (a CEL `Object{…}` merged into the object by
// structured-merge-diff with the resource's OpenAPI schema; atomic fields
// may not be set) or a JSONPatch (a CEL list of `JSONPatch{…}` operations;
// a failed `test` leaves the object as it was). Errors act as failurePolicy
// says, refused with kube-apiserver's "policy 'p' with binding 'b' denied
// request: …". A policy with reinvocationPolicy IfNeeded runs again, once,
// when a policy after it changed the object.
//
// Policies and bindings are read from the server's watch caches and each
// policy is compiled once per generation.
package mutatingadmissionpolicy
