// Package clientbuilder gives each controller of the controller manager its
// own identity, as kube-controller-manager does with
// --use-service-account-credentials: Builder.Config(name) returns a client
// configuration that authenticates as the ServiceAccount kube-system/<name>.
//
// What it promises:
//
//   - The ServiceAccount is created (by the root configuration, the
//     controller manager's own identity) when it does not exist, and its
//     token obtained with the TokenRequest API (serviceaccounts/token,
//     an hour by default), lazily on the first request of the returned
//     configuration, so building a configuration talks to no server.
//   - The token is kept and renewed before it expires: once 80% of its
//     lifetime has passed (a lifetime under 10 minutes counts as 10, as
//     clock skew would make it); a 401 answer drops it, so the next request
//     gets a new one (a deleted and recreated ServiceAccount).
//   - Failures to get a token are retried 4 times with back-off from 500 ms
//     before the request fails with the cause.
//   - The configurations carry no credential of the root configuration
//     (bearer token, client certificate) and a user agent naming the
//     ServiceAccount user; configurations for one name share one token.
//
// Safe for concurrent use.
package clientbuilder
