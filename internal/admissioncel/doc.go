// Package admissioncel holds the CEL environments of kube-apiserver's
// admission expressions — the match conditions of admission webhooks and
// the expressions of ValidatingAdmissionPolicies and
// MutatingAdmissionPolicies — for the two places that compile them: the
// write-time checks of the configuration objects
// (internal/registry/admissionregistration), which refuse an expression
// that does not compile or has the wrong type, and the admission plugins
// that evaluate them (internal/admission/policycel, and the webhooks'
// match conditions). One definition keeps the two in agreement: what the
// registry accepts is what the plugins can run.
//
// An environment declares object and oldObject (dynamic), request (the
// typed admission request, RequestDeclType), namespaceObject (a typed
// namespace, NamespaceDeclType), and, as Vars selects, params (dynamic),
// authorizer and authorizer.requestResource, and the JSONPatch and Object
// types of mutations; with composition, `variables`, whose fields are
// declared as a policy's variables are compiled (DeclareVariable). They
// are built on Kubernetes' own CEL packages at kube-apiserver v1.37's
// compatibility version (1.36), with the strict cost estimator.
//
// An Envs is not safe for concurrent use while environments are built or
// variables declared; the environments it returns are.
package admissioncel
