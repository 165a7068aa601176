// Package resourcequota is the ResourceQuota admission: it refuses a write
// that would take a namespace's usage past a quota's hard limits, and
// charges the usage of the writes it admits to the quotas' status.used at
// once, so that concurrent creates never pass a limit between two runs of
// the quota controller.
//
// # Where it sits
//
// As in Kubernetes, ResourceQuota is the last validating plugin of the
// admission chain (package admission): after the mutating phase, after the
// strategy's validation, the kind's own validating admission
// (registry.Resource.AdmitValidate) and the other validating plugins
// (LimitRanger's checks), right before the write; on creates and
// on the updates the kind's evaluator handles (pods/resize, services,
// claims). An invalid object is refused (422) before it is charged.
// Deletes are not charged: the quota controller releases their usage.
//
// # What it promises
//
//   - The usage of an object is its kind's registry.QuotaEvaluator
//     (package quota falls back to an object counter: count/<resource>.<group>).
//   - A quota covers a write when its status.hard names something the
//     evaluator uses and the object falls under all its scopes; a covered
//     quota whose status.used lacks a hard name (the controller has not
//     seen it yet) refuses: "status unknown for quota: q, resources: pods".
//   - Refusals are 403 Forbidden, worded as kube-apiserver's:
//     `pods "p" is forbidden: exceeded quota: q, requested: pods=1, used:
//     pods=2, limited: pods=2`, `... failed quota: q: must specify
//     limits.cpu for: c`, `... quota usage is negative for resource(s): x`.
//   - Charging is a compare-and-swap of each quota's status (a conflicting
//     write re-reads the quota and checks again), so N concurrent creates
//     against a quota of k admit exactly k. A charge is given back when
//     the write is not stored (refused later, lost race, dry run) or a
//     later quota refuses; Kubernetes leaves those to the controller's
//     next recount.
//
// The core kind events is ignored, as by Kubernetes.
package resourcequota
