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
// The decision is the server's Authorizer (registry.Env.Authorizer). That
// is authorizer.AlwaysAllow today: setpoint has no authorization yet, every
// authenticated user may do everything, so the access reviews answer
// allowed=true with no reason and SelfSubjectRulesReview answers "*" on
// everything, incomplete=false, as kube-apiserver does with
// --authorization-mode=AlwaysAllow. The RBAC authorizer will replace it
// without changes here.
package authorization
