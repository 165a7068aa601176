// Package certificates describes the certificates.k8s.io/v1 resources
// kube-apiserver v1.37.2 serves: certificatesigningrequests (with status
// and approval), clustertrustbundles and podcertificaterequests (with
// status).
//
// CertificateSigningRequests: the requester (spec.username, uid, groups,
// extra) is the user who creates the request, whatever the body says;
// spec and status are kept from the stored object on update; status
// writes keep the Approved and Denied conditions, which only the approval
// subresource changes; condition timestamps are filled with the server's
// time. The request must be a signed PKCS#10 CSR in a "CERTIFICATE
// REQUEST" PEM block; kubernetes.io/kube-apiserver-client requests for the
// system:masters group are refused (kube-apiserver's
// CertificateSubjectRestriction admission).
//
// ClusterTrustBundles: names carry the signer name, trust bundles are CA
// certificates, the signer name is immutable.
//
// PodCertificateRequests: spec is immutable, maxExpirationSeconds defaults
// to 86400, the stub PKCS#10 request must be signed by an Ed25519, ECDSA
// (P-256/384/521) or RSA (3072/4096) key; status moves once to Issued (a
// chain for the requested key, with consistent times), Denied or Failed.
//
// Updates of the last two must name a resourceVersion, as kube-apiserver
// requires.
//
// Signer permissions ("approve", "sign", "attest" on signers) are asked of
// the server's Authorizer (registry.Env.Authorizer: system:masters, then
// the --authorization-mode list, RBAC by default). kube-apiserver checks them in
// validating admission, after validation; here they are checked in Admit,
// which runs before validation, but only once the object is otherwise
// valid, so the answers agree.
package certificates
