// Package rbacpolicy owns kube-apiserver's default RBAC policy: the
// ClusterRoles, ClusterRoleBindings, Roles and RoleBindings (labelled
// kubernetes.io/bootstrapping=rbac-defaults) that kube-apiserver v1.37.2
// creates at start, and their reconciliation at every start.
//
// # Data
//
// zz_generated_policy.json is recorded from the reference kube-apiserver
// by compat/cmd/rbacpolicy: names, labels, annotations, rules, aggregation
// rules, role references and subjects, without server-set metadata.
// Default returns it. The aggregated ClusterRoles (admin, edit, view) carry
// their aggregationRule and no rules; the ClusterRole aggregation
// controller (internal/controllers/clusterroleaggregation) fills them.
// testdata/aggregated.json holds their rules as the reference's controller
// manager aggregated them, for tests.
//
// # Reconciliation
//
// ReconcileClusterRole, ReconcileRole, ReconcileClusterRoleBinding and
// ReconcileRoleBinding bring a stored default object toward its definition
// the way kube-apiserver's rbac/bootstrap-roles post-start hook does, in
// union mode: missing labels and annotations are added (the stored values
// win), missing rules are added broken down into rules of one verb and
// resource (Uncovered), missing aggregation selectors are added, missing
// subjects are added, and a binding whose roleRef differs is to be
// recreated. An object annotated rbac.authorization.kubernetes.io/autoupdate:
// "false" is left alone. Nothing the stored object has is taken away.
//
// The rbac registry (internal/registry/rbac) hands the policy to the API
// server as the resources' Bootstrap objects with these functions as
// their Reconcile hook; the server runs them before it reports ready.
package rbacpolicy
