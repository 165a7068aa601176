package registry

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// QuotaEvaluator is a kind's part in ResourceQuota: what one of its objects
// uses, which quota scopes it falls under and what a quota demands it
// declare. The ResourceQuota admission (package admission/resourcequota)
// charges a write with it, and the quota controller sums it over a
// namespace's objects. It keeps no state and reads nothing but the object.
type QuotaEvaluator interface {
	// MatchingResources returns those of names (a quota's hard names) that
	// objects of the kind can use.
	MatchingResources(names []corev1.ResourceName) []corev1.ResourceName
	// Usage is what obj uses at now (a pod that has finished, or whose
	// grace period has passed, uses nothing but its object count).
	Usage(obj runtime.Object, now time.Time) (corev1.ResourceList, error)
	// MatchesScope reports whether obj falls under one scope requirement
	// of a quota (kinds without scopes answer false).
	MatchesScope(req corev1.ScopedResourceSelectorRequirement, obj runtime.Object) (bool, error)
	// Constraints refuses obj when it does not declare what the quota's
	// names required demand (a pod's containers must request cpu when a
	// quota limits requests.cpu); nil when nothing is missing. The error's
	// text is what follows "failed quota: <name>: " in the refusal.
	Constraints(required []corev1.ResourceName, obj runtime.Object) error
	// Handles reports whether a write of the kind may change its usage
	// (every kind: create; pods: resize; services and claims: update).
	Handles(op Operation, subresource string) bool
}
