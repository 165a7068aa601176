package deployment

import (
	"math"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// This file is the rollout arithmetic: pure functions of a Deployment and
// its ReplicaSets. ReplicaSet lists hold no nil entries unless said.

func isRollingUpdate(d *appsv1.Deployment) bool {
	return d.Spec.Strategy.Type == appsv1.RollingUpdateDeploymentStrategyType
}

// replicas is spec.replicas, 1 when unset (the API server's default).
func replicas(d *appsv1.Deployment) int32 {
	if d.Spec.Replicas == nil {
		return 1
	}
	return *d.Spec.Replicas
}

func rsReplicas(rs *appsv1.ReplicaSet) int32 {
	if rs == nil || rs.Spec.Replicas == nil {
		return 0
	}
	return *rs.Spec.Replicas
}

// resolveFenceposts turns maxSurge and maxUnavailable into numbers for
// desired replicas: surge rounds up, unavailable rounds down, unset means
// 25%, and when both come out 0 unavailable becomes 1 so that a rollout
// can always move.
func resolveFenceposts(surge, unavailable *intstr.IntOrString, desired int32) (int32, int32, error) {
	def := intstr.FromString("25%")
	s, err := intstr.GetScaledValueFromIntOrPercent(intstr.ValueOrDefault(surge, def), int(desired), true)
	if err != nil {
		return 0, 0, err
	}
	u, err := intstr.GetScaledValueFromIntOrPercent(intstr.ValueOrDefault(unavailable, def), int(desired), false)
	if err != nil {
		return 0, 0, err
	}
	if s == 0 && u == 0 {
		u = 1
	}
	return int32(s), int32(u), nil
}

// fenceposts resolves the rolling update's maxSurge and maxUnavailable for
// spec.replicas (an unset rollingUpdate counts as 25%/25%). Invalid values
// were refused by validation; they count as 0 here.
func fenceposts(d *appsv1.Deployment) (surge, unavailable int32) {
	var s, u *intstr.IntOrString
	if ru := d.Spec.Strategy.RollingUpdate; ru != nil {
		s, u = ru.MaxSurge, ru.MaxUnavailable
	}
	surge, unavailable, _ = resolveFenceposts(s, u, replicas(d))
	return surge, unavailable
}

// maxSurge is how many pods above spec.replicas a rolling update may run
// (0 for Recreate).
func maxSurge(d *appsv1.Deployment) int32 {
	if !isRollingUpdate(d) {
		return 0
	}
	s, _ := fenceposts(d)
	return s
}

// maxUnavailable is how many of spec.replicas may be unavailable during a
// rolling update, never more than spec.replicas (0 for Recreate).
func maxUnavailable(d *appsv1.Deployment) int32 {
	if !isRollingUpdate(d) || replicas(d) == 0 {
		return 0
	}
	_, u := fenceposts(d)
	return min(u, replicas(d))
}

// specTotal sums spec.replicas.
func specTotal(rss []*appsv1.ReplicaSet) int32 {
	var n int32
	for _, rs := range rss {
		n += rsReplicas(rs)
	}
	return n
}

// statusSum sums one status count over rss (nil entries count 0).
func statusSum(rss []*appsv1.ReplicaSet, field func(*appsv1.ReplicaSetStatus) int32) int32 {
	var n int32
	for _, rs := range rss {
		if rs != nil {
			n += field(&rs.Status)
		}
	}
	return n
}

// statusTotal sums status.replicas.
func statusTotal(rss []*appsv1.ReplicaSet) int32 {
	return statusSum(rss, func(s *appsv1.ReplicaSetStatus) int32 { return s.Replicas })
}

func readyTotal(rss []*appsv1.ReplicaSet) int32 {
	return statusSum(rss, func(s *appsv1.ReplicaSetStatus) int32 { return s.ReadyReplicas })
}

func availableTotal(rss []*appsv1.ReplicaSet) int32 {
	return statusSum(rss, func(s *appsv1.ReplicaSetStatus) int32 { return s.AvailableReplicas })
}

// podsBound is the most pods rss may have running now: per ReplicaSet the
// larger of spec.replicas (pods it may create) and status.replicas (pods it
// last counted, which outlive a scale-down until its controller deletes
// them). Kubernetes sums spec.replicas alone; the larger bound keeps
// maxSurge true of the pods themselves while a scale-down is in flight.
func podsBound(rss []*appsv1.ReplicaSet) int32 {
	var n int32
	for _, rs := range rss {
		if rs != nil {
			n += max(rsReplicas(rs), rs.Status.Replicas)
		}
	}
	return n
}

// availableBound is the number of available pods rss will keep: per
// ReplicaSet the smaller of status.availableReplicas and spec.replicas (a
// ReplicaSet just scaled down still reports the pods it is about to
// delete). Kubernetes sums status.availableReplicas; the smaller bound keeps
// maxUnavailable true of the pods while a scale-down is in flight.
func availableBound(rss []*appsv1.ReplicaSet) int32 {
	var n int32
	for _, rs := range rss {
		if rs != nil {
			n += min(rsReplicas(rs), rs.Status.AvailableReplicas)
		}
	}
	return n
}

// newRSNewReplicas is the size the new ReplicaSet should grow to now:
// Recreate jumps to spec.replicas; a rolling update adds what maxSurge
// leaves room for, up to spec.replicas.
func newRSNewReplicas(d *appsv1.Deployment, allRSs []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) int32 {
	if !isRollingUpdate(d) {
		return replicas(d)
	}
	cur := podsBound(allRSs)
	limit := replicas(d) + maxSurge(d)
	if cur >= limit {
		return rsReplicas(newRS)
	}
	up := min(limit-cur, replicas(d)-rsReplicas(newRS))
	return rsReplicas(newRS) + max(up, 0)
}

// isSaturated tells whether rs carries the whole Deployment: sized to
// spec.replicas by this Deployment (desired-replicas annotation) and all
// available.
func isSaturated(d *appsv1.Deployment, rs *appsv1.ReplicaSet) bool {
	if rs == nil {
		return false
	}
	desired, ok := intAnnotation(rs, DesiredReplicasAnnotation)
	return ok && rsReplicas(rs) == replicas(d) && desired == replicas(d) && rs.Status.AvailableReplicas == replicas(d)
}

// filterActive keeps the ReplicaSets with spec.replicas > 0 (nil entries
// dropped).
func filterActive(rss []*appsv1.ReplicaSet) []*appsv1.ReplicaSet {
	out := make([]*appsv1.ReplicaSet, 0, len(rss))
	for _, rs := range rss {
		if rsReplicas(rs) > 0 {
			out = append(out, rs)
		}
	}
	return out
}

// findActiveOrLatest returns the single active ReplicaSet, or the newest
// one when none is active, or nil when several are active.
func findActiveOrLatest(newRS *appsv1.ReplicaSet, oldRSs []*appsv1.ReplicaSet) *appsv1.ReplicaSet {
	if newRS == nil && len(oldRSs) == 0 {
		return nil
	}
	olds := append([]*appsv1.ReplicaSet(nil), oldRSs...)
	sortByCreation(olds)
	active := filterActive(append(append([]*appsv1.ReplicaSet(nil), olds...), newRS))
	switch len(active) {
	case 0:
		if newRS != nil {
			return newRS
		}
		return olds[len(olds)-1]
	case 1:
		return active[0]
	default:
		return nil
	}
}

// proportion is how many of the replicas still to add (negative: remove)
// rs takes in proportional scaling: its share of the new total, bounded by
// what is left.
func proportion(rs *appsv1.ReplicaSet, d *appsv1.Deployment, toAdd, added int32) int32 {
	if rs == nil || rsReplicas(rs) == 0 || toAdd == 0 || toAdd == added {
		return 0
	}
	frac := rsFraction(rs, d)
	left := toAdd - added
	if toAdd > 0 {
		return min(frac, left)
	}
	return max(frac, left)
}

// rsFraction estimates rs's size after the Deployment's resize from the
// max-replicas annotation it was sized under.
func rsFraction(rs *appsv1.ReplicaSet, d *appsv1.Deployment) int32 {
	if replicas(d) == 0 {
		return -rsReplicas(rs)
	}
	total := replicas(d) + maxSurge(d)
	annotated, ok := intAnnotation(rs, MaxReplicasAnnotation)
	if !ok || annotated == 0 {
		annotated = d.Status.Replicas
	}
	if annotated == 0 {
		return 0
	}
	size := float64(rsReplicas(rs)) * float64(total) / float64(annotated)
	return int32(math.Round(size)) - rsReplicas(rs)
}

// sortByCreation orders oldest first, ties by name.
func sortByCreation(rss []*appsv1.ReplicaSet) {
	sort.SliceStable(rss, func(i, j int) bool {
		a, b := rss[i], rss[j]
		if a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			return a.Name < b.Name
		}
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	})
}

// sortBySizeNewer orders larger first, then newer first (scaling up).
func sortBySizeNewer(rss []*appsv1.ReplicaSet) {
	sort.SliceStable(rss, func(i, j int) bool {
		a, b := rss[i], rss[j]
		if rsReplicas(a) != rsReplicas(b) {
			return rsReplicas(a) > rsReplicas(b)
		}
		if a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			return a.Name > b.Name
		}
		return b.CreationTimestamp.Before(&a.CreationTimestamp)
	})
}

// sortBySizeOlder orders larger first, then older first (scaling down).
func sortBySizeOlder(rss []*appsv1.ReplicaSet) {
	sort.SliceStable(rss, func(i, j int) bool {
		a, b := rss[i], rss[j]
		if rsReplicas(a) != rsReplicas(b) {
			return rsReplicas(a) > rsReplicas(b)
		}
		if a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			return a.Name < b.Name
		}
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	})
}
