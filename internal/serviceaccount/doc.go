// Package serviceaccount issues and verifies service-account tokens as
// kube-apiserver does: JWTs signed RS256 with the cluster's service-account
// key (its kid is the unpadded base64url SHA-256 of the public key's DER),
// issuer https://kubernetes.default.svc.cluster.local by default, the
// subject system:serviceaccount:<namespace>:<name>, and the private claim
// "kubernetes.io" naming the namespace, the service account and the object
// the token is bound to (a pod, with the node it runs on, a secret, or a
// node), each by name and uid.
//
// Verify checks the signature, issuer, audiences and validity window only;
// whether the service account and the bound object still exist with the
// same uid is the caller's to check (the API server reads them), since a
// token dies with them.
package serviceaccount
