// Package authz compares who may do what on setpoint and on the real
// kube-apiserver v1.37.2 (with --authorization-mode=Node,RBAC and
// kube-controller-manager, so the aggregated roles admin, edit and view
// carry their rules), side by side in one run.
//
// Both clusters get the same namespaces, ServiceAccounts and bindings.
// Each identity of a matrix — the admin, ServiceAccounts with no binding,
// bound to view cluster-wide, to edit and to admin in one namespace (with
// ServiceAccount tokens from TokenRequest), a node, and an impersonated
// user and group — asks SelfSubjectAccessReviews for verbs × resources and
// subresources × namespaces, and sends real requests (dry-run writes); the
// answers must agree: allowed and denied, the reasons, and the 403 bodies.
// Escalation attempts (binding cluster-admin from admin, a Role with more
// than the user holds) must be refused on both with the same message.
//
// The package has only tests; it runs in the compat module because it
// starts the reference.
package authz
