// Package quota is what the ResourceQuota admission and the quota
// controller share: arithmetic on resource lists (Add, Subtract, Mask,
// LessThanOrEqual), the evaluator of a resource (its kind's
// registry.QuotaEvaluator, or an object counter for count/<resource>.<group>
// when the kind has none, as Kubernetes' generic object-count evaluator),
// and whether a quota covers an object (its hard names and its scopes). It
// keeps no state and does no I/O.
package quota
