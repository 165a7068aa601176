// Package authorizer owns the authorization decision of the API server:
// may a user do a verb on a resource (or a non-resource path), and which
// rules does a user hold in a namespace.
//
// # Today: AlwaysAllow
//
// setpoint authorizes nothing yet. Every authenticated user may do
// everything, as kube-apiserver does with --authorization-mode=AlwaysAllow,
// and the server's Authorizer is AlwaysAllow. What depends on a decision
// asks the Authorizer the server holds (registry.Env.Authorizer), so the
// answers stay honest about that:
//
//   - SubjectAccessReview, LocalSubjectAccessReview and
//     SelfSubjectAccessReview answer allowed=true with no reason, as
//     kube-apiserver's AlwaysAllow authorizer does;
//   - SelfSubjectRulesReview answers one resource rule and one non-resource
//     rule granting "*" on "*", incomplete=false, as kube-apiserver answers
//     under AlwaysAllow;
//   - the CertificateSigningRequest approval and signing checks and the
//     PodCertificateRequest signing check ("approve" / "sign" on signers)
//     pass.
//
// # Replacing it
//
// The RBAC issue implements Authorizer over Roles and RoleBindings and hands
// it to the server (apiserver.Config.Authorizer), which then also has to
// enforce it on every request. Nothing else changes: the hooks above call
// the interface only. Escalation prevention, the aggregation controller
// and the default roles belong to that issue too.
//
// Implementations must be safe for concurrent use.
package authorizer
