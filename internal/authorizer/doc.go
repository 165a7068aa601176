// Package authorizer owns the authorization decision of the API server:
// may a user do a verb on a resource (or a non-resource path), and which
// rules does a user hold in a namespace.
//
// Authorizer is the decision interface; the server holds one
// (registry.Env.Authorizer hands it to the hooks that ask: the access
// reviews, the CertificateSigningRequest approve/sign checks, the
// escalate and bind checks of RBAC objects) and its authorization filter
// asks it about every request.
//
// This package has the pieces kube-apiserver assembles its authorizer
// from:
//
//   - AlwaysAllow and AlwaysDeny, the modes of those names (AlwaysDeny has
//     no opinion, with the reason "Everything is forbidden.");
//   - PrivilegedGroups, which allows the members of system:masters before
//     any mode is asked;
//   - Union, the first Allow or Deny of a list, the reasons of the others
//     joined; Named, which prefixes a mode's NoOpinion reason with its
//     name ("rbac: …"), as kube-apiserver words the reasons of its
//     --authorization-mode list.
//
// The RBAC authorizer is package authorizer/rbac; the Node authorizer
// joins the modes as package authorizer/node.
//
// Implementations must be safe for concurrent use.
package authorizer
