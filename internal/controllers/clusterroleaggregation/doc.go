// Package clusterroleaggregation is kube-controller-manager's
// "clusterrole-aggregation-controller": the rules of a ClusterRole with an
// aggregationRule are the union of the rules of the ClusterRoles its
// clusterRoleSelectors select (the default admin, edit and view roles
// gather those labelled rbac.authorization.k8s.io/aggregate-to-<role>).
//
// # Contract
//
//	err := clusterroleaggregation.Add(mgr, clusterroleaggregation.Options{})
//
// Behaviour, as Kubernetes':
//
//   - Any ClusterRole added, updated or deleted queues every ClusterRole
//     that has an aggregationRule (the dependencies between roles are not
//     tracked; the set of ClusterRoles is small).
//   - A sync computes, selector by selector in the rule's order, the
//     ClusterRoles the selector matches sorted by name, the aggregated
//     role itself excluded, and appends each of their rules in order
//     unless an equal rule is already in the result.
//   - When the result differs from the role's rules it is written with a
//     server-side apply of the rules alone, field manager
//     "clusterrole-aggregation-controller", forced. An empty result applies
//     no rules, which drops the rules the controller owned.
//   - A selector that is not a valid label selector fails the sync, which
//     is retried with back-off.
//
// The controller records no Events (Kubernetes' records none).
package clusterroleaggregation
