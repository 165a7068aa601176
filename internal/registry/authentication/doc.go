// Package authentication describes the authentication.k8s.io/v1
// resources: tokenreviews and selfsubjectreviews. Both are created only
// and never stored (registry.Virtual).
//
// What they answer is what setpoint's authentication knows: static bearer
// tokens (the server's token file), client certificates signed by the
// cluster CA, and the server's service-account tokens (bound tokens from
// the TokenRequest API, legacy tokens kept in token Secrets).
//
//   - A SelfSubjectReview answers the user the request runs as
//     (registry.UserFrom, set by the server's authentication and replaced
//     by impersonation).
//   - A TokenReview authenticates the token it carries for spec.audiences
//     (the API server's audience when none: APIAudience, the issuer
//     https://kubernetes.default.svc.cluster.local, kube-apiserver's
//     conventional default) through registry.Env.AuthenticateToken, as
//     kube-apiserver does:
//   - a static token is valid for the API audience only;
//   - a service-account token must be signed by the server's key, carry
//     one of the requested audiences (status.audiences is the
//     intersection; a legacy token has the API audience), be within its
//     validity window (one minute of leeway), and its service account and
//     bound pod, secret or node must still exist with the uids it names;
//     the user carries the token's id (authentication.kubernetes.io/credential-id)
//     and the pod and node it is bound to as extra;
//   - a refused token's status.error is kube-apiserver's: "invalid bearer
//     token" alone for a token of no known issuer, else
//     "[invalid bearer token, <reason>]" with the service-account
//     authenticator's reason (expired, wrong audience, bad signature,
//     service account not found, token invalidated …).
//
// Bootstrap tokens do not exist in setpoint.
//
// Like kube-apiserver, a TokenReview keeps what the client put in its
// status except the fields the review sets: authenticated; error on
// failure; user and audiences on success.
package authentication
