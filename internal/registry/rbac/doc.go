// Package rbac describes the rbac.authorization.k8s.io/v1 resources:
// roles, clusterroles, rolebindings and clusterrolebindings, with
// kube-apiserver's defaults (roleRef.apiGroup, subjects' apiGroup by
// kind), validation (rules, aggregation rules, roleRef and subjects, names
// as path segments, roleRef immutable) and printers. A PUT may create any
// of them, and none keeps metadata.generation, as in kube-apiserver.
//
// This package serves the objects only. Nothing enforces them yet: setpoint
// authorizes every authenticated request (package authorizer, AlwaysAllow),
// so there is no escalation check on writing roles and bindings, no
// aggregation of ClusterRoles, and no default roles at start. Those come
// with the RBAC authorizer.
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
