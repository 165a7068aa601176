// Package nodeipam is the node IPAM controller with Kubernetes' range
// allocator (pkg/controller/nodeipam, --allocate-node-cidrs): every Node
// without spec.podCIDR gets one node CIDR (NodeCIDRMaskSize, /24) of the
// cluster CIDR (ClusterCIDR, 10.128.0.0/9 — the pod network setpoint's
// simulated nodes use), written to spec.podCIDR and spec.podCIDRs.
//
// # Contract
//
//   - A CIDR any Node carries is taken: the controller records the CIDRs of
//     every node it sees, and before each allocation marks those of every
//     node in its cache, so that it never hands out a CIDR a node already
//     has. The simulated nodes (internal/nodeagent) set their own podCIDR,
//     the i-th /24 counted upwards from the bottom of 10.128.0.0/9; this
//     allocator searches downwards from the top, so that it does not take a
//     CIDR a simulated node about to register will claim for itself.
//   - The write is a strategic merge patch of spec.podCIDR and
//     spec.podCIDRs (the API server lets them change only from empty), tried
//     3 times. A node that got a CIDR from someone else in the meantime keeps
//     it and the allocation is given back.
//   - A deleted node (or one being deleted) gives its CIDRs back.
//   - Events on the Node from component "cidrAllocator", type Warning,
//     "Node <name> status is now: <reason>": CIDRNotAvailable when the range
//     is exhausted (retried with back-off), CIDRAssignmentFailed when the
//     patch keeps failing.
//   - Metrics node_ipam_controller_cidrset_cidrs_allocations_total,
//     _cidrset_cidrs_releases_total, _cidrset_usage_cidrs,
//     _cidrset_allocation_tries_per_request and _cirdset_max_cidrs
//     (Kubernetes' spelling), labelled clusterCIDR.
//
// Not implemented: dual-stack (a second cluster CIDR), the cloud
// allocator, and excluding the service CIDR from the cluster CIDR (setpoint's
// service range 10.96.0.0/12 does not overlap the default cluster CIDR).
//
// Add registers one controller (leader only) on the manager's node
// informer.
package nodeipam
