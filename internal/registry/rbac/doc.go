// Package rbac describes the rbac.authorization.k8s.io/v1 resources:
// roles, clusterroles, rolebindings and clusterrolebindings, with
// kube-apiserver's defaults (roleRef.apiGroup, subjects' apiGroup by
// kind), validation (rules, aggregation rules, roleRef and subjects, names
// as path segments, roleRef immutable) and printers. A PUT may create any
// of them, and none keeps metadata.generation, as in kube-apiserver.
//
// The RBAC authorizer (package authorizer/rbac) enforces them. This package
// prevents escalation on writes, as kube-apiserver's RBAC storage does
// (escalation.go, the kinds' Admit hooks, before validation): nobody grants
// what they do not hold. The server's own writes (no user) and members of
// system:masters pass; otherwise a Role or ClusterRole passes if the user
// may "escalate" roles/clusterroles (namespace, name) or holds every rule
// written (a ClusterRole with an aggregationRule needs full authority:
// "must have cluster-admin privileges to use the aggregationRule"); a
// binding passes if the user may "bind" the role it names or holds all of
// its rules; an update of ownerReferences and finalizers alone passes.
// Refusals are 403s worded as kube-apiserver's (`user "u" (groups=[…]) is
// attempting to grant RBAC permissions not currently held:` then the
// missing rules, compacted and sorted, then `; resolution errors: […]`
// when a binding of the user names a missing role); a binding to a missing
// role is the 404 kube-apiserver answers (`rolebindings.rbac… "role" not
// found`). The rules held are resolved over a consistent read of the RBAC
// objects. The default roles and the aggregation of ClusterRoles are not
// this package's.
//
// # Default policy
//
// The four resources' Bootstrap objects are kube-apiserver's default roles
// and bindings (package rbacpolicy), and their Reconcile hook brings stored
// ones up to date at every start as kube-apiserver's rbac/bootstrap-roles
// post-start hook does: what is missing is created, what is missing from
// an existing object (rules, aggregation selectors, subjects, labels,
// annotations) is added, a binding whose roleRef changed is recreated, and
// objects annotated rbac.authorization.kubernetes.io/autoupdate: "false"
// are left alone (bootstrap.go). The aggregated ClusterRoles are filled by
// the clusterrole-aggregation controller.
//
// # Error order
//
// kube-apiserver v1.37 checks some rules declaratively: a rule without
// verbs, a subject without name and a roleRef without name. Those errors
// come after all the others, as "Required value", and on update only for
// the parts that changed (unchanged parts are not revalidated; a changed
// roleRef is reported as immutable only). The validators here keep that
// order, since clients see it in messages.
package rbac
