// Package rbac is the RBAC authorizer: Kubernetes' role-based access
// control over Roles, ClusterRoles, RoleBindings and ClusterRoleBindings,
// with kube-apiserver's semantics and wording.
//
// # What it decides
//
// A request is allowed when a rule of a role bound to the user grants it:
// the ClusterRoleBindings (cluster-wide), then, for a namespaced request,
// the RoleBindings of that namespace (a RoleBinding to a ClusterRole grants
// the ClusterRole's rules within its namespace only). Subjects are Users
// (by name), Groups (by the user's groups) and ServiceAccounts (the user
// system:serviceaccount:NS:NAME; a RoleBinding's subject without namespace
// means the binding's). Rules match as RuleAllows says: verbs, API groups,
// resources ("*", "res/sub", "*/sub"), resourceNames (never matching a
// request without a name), non-resource URLs (exact, "*", or a prefix
// ending in "*"). The reason of an allow names the binding as kube does
// (`RBAC: allowed by ClusterRoleBinding "x" of ClusterRole "y" to User
// "z"`); RBAC never denies: otherwise it has no opinion, with the roles
// that bindings name but that do not exist as the reason
// (`RBAC: clusterrole.rbac.authorization.k8s.io "y" not found`). Bindings
// are visited in name order (kube-apiserver's order is its informer's, so
// unspecified), which only chooses which binding an allow names.
//
// RulesFor lists a user's rules in a namespace as SelfSubjectRulesReview
// shows them; Rules and RoleRefRules give the policy rules themselves, for
// escalation checks.
//
// # Where the objects come from
//
// The owner feeds the authorizer: Replace with each resource's full list
// first, then Set and Delete for every change (the API server feeds it from
// its own watch caches, in process). Nothing is decided before the four
// first lists arrived: Authorize waits for them.
//
// # Cost
//
// The hot path is a map lookup. Bindings are indexed by the subjects they
// name; the rules a user (name and groups) holds in a namespace are
// resolved once and cached in an immutable snapshot of the objects; any
// change to the objects drops the snapshot, and the next request builds a
// new one. BenchmarkAuthorize measures a decision among 2,000 bindings.
package rbac
