// Package serviceaccount is the ServiceAccount admission plugin, after
// Kubernetes' plugin/pkg/admission/serviceaccount. It looks at pods only
// (the main resource, and the ephemeralcontainers subresource).
//
// # Create (mutating, then the validating checks)
//
//   - spec.serviceAccountName defaults to "default";
//   - the ServiceAccount must exist: else 403 `pods "p" is forbidden: error
//     looking up service account ns/sa: serviceaccount "sa" not found`. It
//     is read from the watch cache, then from storage; for "default",
//     which the ServiceAccount controller creates in every new namespace,
//     storage is asked up to 10 times, 100-200 ms apart, as kube's plugin;
//   - unless the pod's automountServiceAccountToken, or else the
//     ServiceAccount's, is false, the projected volume
//     kube-api-access-<5 random characters> (a bound token, path token,
//     expirationSeconds 3607; ca.crt of the ConfigMap kube-root-ca.crt;
//     the namespace through the downward API; defaultMode 0644) is added,
//     and mounted read-only at /var/run/secrets/kubernetes.io/serviceaccount
//     in every init container and container that mounts nothing there. A
//     volume already named kube-api-access-* is reused;
//   - a pod without imagePullSecrets gets the ServiceAccount's;
//   - when the ServiceAccount is annotated
//     kubernetes.io/enforce-mountable-secrets=true, every secret the pod's
//     volumes and containers' env and envFrom reference must be among its
//     secrets, and every image pull secret among its imagePullSecrets.
//
// Mirror pods (annotation kubernetes.io/config.mirror) are not changed; they
// may not name a ServiceAccount, reference secrets, or project a
// ServiceAccount token (403).
//
// # Update
//
// Only an update of pods/ephemeralcontainers is checked: under an
// enforce-mountable-secrets ServiceAccount, the ephemeral containers may
// reference only its secrets (refused, as kube-apiserver refuses it, with a
// 500 whose message is the bare reason). Other updates are not looked at.
package serviceaccount
