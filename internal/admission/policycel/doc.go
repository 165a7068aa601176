// Package policycel is what the admission policy plugins
// (validatingadmissionpolicy, mutatingadmissionpolicy) share: the CEL
// environments of kube-apiserver's admission policies, compiled once per
// policy change (Compiler, with composition of `variables`); the
// evaluation of compiled expressions against one request (Activation:
// object, oldObject, params, request, namespaceObject, authorizer,
// variables), with kube-apiserver's runtime cost budgets and error
// wording; the matching of a request against matchConstraints and a
// binding's matchResources (resourceRules, excludeResourceRules,
// namespaceSelector, objectSelector, matchPolicy: Equivalent tries the
// equivalent resources and Versioned converts the objects to the one
// matched) and of matchConditions;
// and the reading of a binding's params (paramKind, paramRef) through the
// server.
//
// It uses Kubernetes' CEL packages (k8s.io/apiserver/pkg/cel/...) and
// nothing else of k8s.io/apiserver: the admission framework that
// kube-apiserver builds these on (k8s.io/apiserver/pkg/admission) stays out
// of the product, so its behaviour is reproduced here.
package policycel
