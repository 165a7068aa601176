// Package node is kube-apiserver's Node authorizer (--authorization-mode
// Node, first in kubeadm's Node,RBAC): it decides the requests of
// kubelets, users system:node:<name> in group system:nodes, and has no
// opinion on every other user (RBAC then decides).
//
// For a node it allows, as kube-apiserver v1.37 does:
//
//   - secrets and configmaps: get, list and watch by name, of the objects
//     a pod bound to the node uses (a secret also when a persistent volume
//     the node may read names it); persistentvolumeclaims: get of the
//     claims of its pods, update and patch of their status;
//     persistentvolumes: get of the volumes bound to those claims;
//     resourceclaims: get of its pods' claims; volumeattachments: get of
//     those naming the node; serviceaccounts: get of, and token requests
//     for, its pods' ServiceAccounts;
//   - its own Node (get, list, watch by name; create, update, patch and
//     status updates of any, NodeRestriction keeping them to its own), its
//     Lease in kube-node-lease and its CSINode (create of any name, left to
//     NodeRestriction);
//   - pods: get of its pods, list and watch with the field selector
//     spec.nodeName=<node>, create and delete (mirror pods), status
//     updates and evictions (NodeRestriction keeps them to its pods);
//     resourceslices and podcertificaterequests of its own;
//   - everything else by the rules of kube's system:node ClusterRole,
//     evaluated here (that role is bound to nobody).
//
// What it refuses it leaves as no opinion with kube-apiserver's reason
// ("no relationship found between node 'n' and this object", "can only
// list/watch pods with spec.nodeName field selector", …). RulesFor of a
// node is incomplete with an error, as kube's.
//
// The Graph holds the relations: bound pods and what they reference (the
// same references kube's graph takes, mirror pods none), persistent
// volumes by claim and their kubelet-visible secrets, VolumeAttachments,
// ResourceSlices and PodCertificateRequests by node. Graph.Run keeps it
// current from a Source (the API server's watch caches, in process:
// apiserver.Server.ObjectStream): each resource listed, then its changes, listed again when
// its stream ends. A decision reads the graph under a read lock: a few map
// lookups, no traversal (every path is at most node ← pod ← claim ←
// volume ← secret). A pod's relations appear once its binding reached the
// watch cache, as in kube-apiserver, whose graph follows informers.
package node
