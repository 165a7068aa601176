// Package rbac describes the rbac.authorization.k8s.io/v1 resources:
// roles, clusterroles, rolebindings and clusterrolebindings, with
// kube-apiserver's defaults (roleRef.apiGroup, subjects' apiGroup by
// kind), validation (rules, aggregation rules, roleRef and subjects, names
// as path segments, roleRef immutable) and printers. A PUT may create any
// of them, and none keeps metadata.generation, as in kube-apiserver.
//
// This package serves the objects only. Nothing enforces them yet: setpoint
// authorizes every authenticated request (package authorizer, AlwaysAllow),
// so there is no escalation check on writing roles and bindings. Those come
// with the RBAC authorizer.
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
