// Package plugins builds the admission chain (package admission) from the
// names kube-apiserver's flags take: --enable-admission-plugins and
// --disable-admission-plugins select among kube-apiserver's plugins, and
// New builds the chain of those setpoint implements, in kube-apiserver's
// order.
//
// A name kube-apiserver knows falls in one of three sets:
//
//   - plugins of the chain, each a package under internal/admission
//     (Constructors);
//   - plugins setpoint runs as a kind's own admission
//     (registry.Resource.Admit), always on: PersistentVolumeClaimResize,
//     PodResizeValidator, CertificateApproval, CertificateSigning,
//     CertificateSubjectRestriction, ClusterTrustBundleAttest,
//     DefaultIngressClass (KindOwned); disabling one is an error;
//   - plugins setpoint does not implement: enabling one is an error; the
//     default-on ones among them (the admission policies,
//     TaintNodesByCondition, PodTopologyLabels, …) are simply absent.
//
// MutatingAdmissionWebhook and ValidatingAdmissionWebhook (package
// admission/webhook) are on by default, at kube-apiserver's places.
package plugins
