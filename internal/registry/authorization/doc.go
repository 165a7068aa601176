// Package authorization describes the authorization.k8s.io/v1 resources:
// subjectaccessreviews, localsubjectaccessreviews,
// selfsubjectaccessreviews and selfsubjectrulesreviews. All are created
// only and never stored (registry.Virtual).
//
// Their specs are validated as kube-apiserver validates them (exactly one
// of resourceAttributes and nonResourceAttributes, a user or group for
// the reviews about someone else, empty metadata, the namespace rules of
// LocalSubjectAccessReview, field and label selector attributes); errors
// are 422s on the group alone, as kube-apiserver names them
// (`.authorization.k8s.io "" is invalid: …`).
//
// The decision is the server's Authorizer (registry.Env.Authorizer), as
// kube-apiserver answers: allowed, denied and reason as the authorizer
// gives them (under RBAC: `RBAC: allowed by RoleBinding "b/ns" of
// ClusterRole "r" to ServiceAccount "sa/ns"`, or the missing roles of the
// user's bindings, `rbac: RBAC: clusterrole.rbac.authorization.k8s.io "r"
// not found`, as the reason of a refusal), evaluationError from the
// authorizer's error and the selector notes; SelfSubjectRulesReview lists
// the rules the requesting user holds in spec.namespace (its
// ClusterRoleBindings' and the namespace's RoleBindings'), with the
// missing roles as evaluationError. Under --authorization-mode=AlwaysAllow
// they answer allowed=true with no reason, and "*" on everything.
package authorization
