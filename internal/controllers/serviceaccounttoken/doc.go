// Package serviceaccounttoken is the tokens controller of
// kube-controller-manager ("serviceaccount-token-controller"): it fills
// the Secrets of type kubernetes.io/service-account-token that users
// create to ask for a legacy, never-expiring token, and removes them with
// their ServiceAccount. It creates no Secret by itself (Kubernetes stopped
// generating one per ServiceAccount in 1.24).
//
// # Contract
//
//	err := serviceaccounttoken.Add(mgr, serviceaccounttoken.Options{Signer: issuer, RootCA: caPEM})
//
// Behaviour, as Kubernetes' tokens controller:
//
//   - A token Secret names its ServiceAccount in the annotation
//     kubernetes.io/service-account.name (and, once filled,
//     kubernetes.io/service-account.uid). When the ServiceAccount exists
//     (with that uid, if one is named), the Secret gets, if missing:
//     data.token (a legacy JWT signed by Signer: issuer
//     kubernetes/serviceaccount, the kubernetes.io/serviceaccount/* claims
//     naming the ServiceAccount and the Secret), data.namespace, and
//     data.ca.crt (RootCA, replaced when it differs); and both annotations.
//     The update is made on the live Secret and only when its
//     resourceVersion is the cached one (a newer one comes as its own
//     event).
//   - When the ServiceAccount does not exist (read from the cache, then
//     from the server) the Secret is deleted, with a uid precondition; a
//     deleted ServiceAccount deletes its token Secrets.
//   - The API server accepts the token while the Secret holds it and the
//     ServiceAccount exists with the named uid, and labels the Secret
//     kubernetes.io/legacy-token-last-used with the day of its last use
//     (internal/apiserver).
//
// Without a Signer the controller is not started, as kube-controller-manager
// runs it only with --service-account-private-key-file.
package serviceaccounttoken
