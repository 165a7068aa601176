// Package noderestriction is kube-apiserver's NodeRestriction admission
// plugin: it keeps a kubelet (user system:node:<name> in system:nodes) to
// its own objects, where the Node authorizer allows a verb on a kind but
// cannot see the object:
//
//   - pods: create only mirror pods (annotation kubernetes.io/config.mirror)
//     bound to itself, owned by its Node (one controller reference with its
//     uid, no blockOwnerDeletion) and using no API object (secrets,
//     configmaps, claims, a ServiceAccount, projected tokens, resource
//     claims, ephemeral containers); delete only pods bound to itself;
//     status only of its pods, never their labels or resource claim
//     statuses; evictions only of its pods;
//   - its Node only: created without configSource or labels in the
//     node-restriction.kubernetes.io namespace or kubernetes.io/k8s.io
//     labels other than the kubelet's own; updated without changing
//     taints, ownerReferences, such labels or configSource;
//   - persistentvolumeclaims: only status updates, changing nothing but
//     status capacity, conditions and allocated resources;
//   - ServiceAccount tokens only bound to a pod (uid given and current)
//     running on itself;
//   - its Lease in kube-node-lease, its CSINode, ResourceSlices naming it.
//
// Every refusal is a 403 Forbidden worded as kube-apiserver's
// (`pods "p" is forbidden: node "n" can only create pods with
// spec.nodeName set to itself`). Other users pass untouched.
//
// Contract: Admit(ctx, env, a) in the shape of the admission chain's
// plugins (package admission), with Name "NodeRestriction"; in kube's
// order it runs after ServiceAccount and before PodSecurity. It reads
// pods and Nodes through env. Not done: CertificateSigningRequests (a
// node CSR's CN) and PodCertificateRequests, which kube's plugin also
// checks, and the ServiceAccount token audience restriction.
package noderestriction
