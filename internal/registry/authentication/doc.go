// Package authentication describes the authentication.k8s.io/v1
// resources: tokenreviews and selfsubjectreviews. Both are created only
// and never stored (registry.Virtual).
//
// What they answer is what setpoint's authentication knows: static bearer
// tokens (the server's token file) and client certificates signed by the
// cluster CA.
//
//   - A SelfSubjectReview answers the user the request runs as
//     (registry.UserFrom, set by the server's authentication).
//   - A TokenReview authenticates the token it carries against the
//     server's tokens (registry.Env.AuthenticateToken). Static tokens are
//     valid for the server's API audiences, as kube-apiserver's token file
//     is: setpoint has no service-account issuer, so its API audience is
//     kube-apiserver's default issuer, https://kubernetes.default.svc.cluster.local
//     (APIAudience). A review naming other audiences only is
//     unauthenticated ("invalid bearer token"). Service-account tokens and
//     bootstrap tokens do not exist in setpoint yet.
//
// Like kube-apiserver, a TokenReview keeps what the client put in its
// status except the fields the review sets: authenticated; error on
// failure; user and audiences on success.
package authentication
