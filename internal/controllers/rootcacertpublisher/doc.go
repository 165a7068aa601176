// Package rootcacertpublisher is kube-controller-manager's
// "root-ca-certificate-publisher-controller": every namespace holds the
// ConfigMap "kube-root-ca.crt" whose data "ca.crt" is the CA bundle that
// verifies the API server's serving certificate, for pods that talk to
// kubernetes.default.svc.
//
// # Contract
//
//	err := rootcacertpublisher.Add(mgr, rootcacertpublisher.Options{RootCA: pem})
//
// Behaviour:
//
//   - RootCA is required (kube-controller-manager's --root-ca-file, or
//     the CA its own client configuration trusts; the controller manager
//     of this module passes the latter unless told otherwise).
//   - Syncs (key = namespace name) are triggered by a namespace added, a
//     namespace updated while Active, and the ConfigMap "kube-root-ca.crt"
//     updated or deleted.
//   - A sync creates the ConfigMap when it is missing, with data exactly
//     {"ca.crt": RootCA} and the annotation kubernetes.io/description
//     (Description); when present but with other data or no description,
//     it writes both back, keeping the object's other labels and
//     annotations. A create refused because the namespace is gone or
//     terminating is not retried.
package rootcacertpublisher
