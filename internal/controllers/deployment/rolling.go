package deployment

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
)

// rolloutRolling moves one step of a rolling update: grow the new
// ReplicaSet within maxSurge, else shrink old ones within maxUnavailable,
// else (complete) clean up history; then record the rollout status.
func (s *syncer) rolloutRolling(ctx context.Context, rsList []*appsv1.ReplicaSet) error {
	newRS, oldRSs, err := s.allReplicaSets(ctx, rsList, true)
	if err != nil {
		return err
	}
	allRSs := append(append([]*appsv1.ReplicaSet(nil), oldRSs...), newRS)
	scaledUp, err := s.reconcileNewReplicaSet(ctx, allRSs, newRS)
	if err != nil {
		return err
	}
	if scaledUp {
		return s.syncRolloutStatus(ctx, allRSs, newRS)
	}
	scaledDown, err := s.reconcileOldReplicaSets(ctx, allRSs, filterActive(oldRSs), newRS)
	if err != nil {
		return err
	}
	if scaledDown {
		return s.syncRolloutStatus(ctx, allRSs, newRS)
	}
	if deploymentComplete(s.d, &s.d.Status) {
		if err := s.cleanup(ctx, oldRSs); err != nil {
			return err
		}
	}
	return s.syncRolloutStatus(ctx, allRSs, newRS)
}

// reconcileNewReplicaSet sizes the new ReplicaSet: down to spec.replicas
// if above, else up as far as maxSurge allows.
func (s *syncer) reconcileNewReplicaSet(ctx context.Context, allRSs []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) (bool, error) {
	want := replicas(s.d)
	switch cur := rsReplicas(newRS); {
	case cur == want:
		return false, nil
	case cur > want:
		scaled, _, err := s.scaleReplicaSet(ctx, newRS, want)
		return scaled, err
	}
	scaled, _, err := s.scaleReplicaSet(ctx, newRS, newRSNewReplicas(s.d, allRSs, newRS))
	return scaled, err
}

// reconcileOldReplicaSets shrinks the active old ReplicaSets: at most
// allPods - minAvailable - (unavailable pods of the new ReplicaSet), first
// their unavailable replicas, then available ones while more than
// minAvailable stay available.
func (s *syncer) reconcileOldReplicaSets(ctx context.Context, allRSs, oldRSs []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) (bool, error) {
	if specTotal(oldRSs) == 0 {
		return false, nil
	}
	minAvailable := replicas(s.d) - maxUnavailable(s.d)
	newUnavailable := rsReplicas(newRS) - newRS.Status.AvailableReplicas
	maxScaledDown := specTotal(allRSs) - minAvailable - newUnavailable
	if maxScaledDown <= 0 {
		return false, nil
	}
	oldRSs, cleaned, err := s.cleanupUnhealthyReplicas(ctx, oldRSs, maxScaledDown)
	if err != nil {
		return false, err
	}
	all := append(append([]*appsv1.ReplicaSet(nil), oldRSs...), newRS)
	scaledDown, err := s.scaleDownOldForRollingUpdate(ctx, all, oldRSs)
	if err != nil {
		return false, err
	}
	return cleaned+scaledDown > 0, nil
}

// cleanupUnhealthyReplicas removes, oldest ReplicaSet first, replicas that
// are not available (up to limit in all): that costs no availability. It
// returns oldRSs with the scaled ones replaced by the server's answers.
func (s *syncer) cleanupUnhealthyReplicas(ctx context.Context, oldRSs []*appsv1.ReplicaSet, limit int32) ([]*appsv1.ReplicaSet, int32, error) {
	out := append([]*appsv1.ReplicaSet(nil), oldRSs...)
	sortByCreation(out)
	var total int32
	for i, rs := range out {
		if total >= limit {
			break
		}
		unhealthy := rsReplicas(rs) - rs.Status.AvailableReplicas
		if rsReplicas(rs) == 0 || unhealthy <= 0 {
			continue
		}
		n := min(limit-total, unhealthy)
		_, updated, err := s.scaleReplicaSet(ctx, rs, rsReplicas(rs)-n)
		if err != nil {
			return nil, total, err
		}
		total += n
		out[i] = updated
	}
	return out, total, nil
}

// scaleDownOldForRollingUpdate shrinks old ReplicaSets, oldest first, by
// as many replicas as are available above minAvailable. Availability is
// counted with availableBound, so replicas a ReplicaSet still reports but
// is about to delete are not counted twice.
func (s *syncer) scaleDownOldForRollingUpdate(ctx context.Context, allRSs, oldRSs []*appsv1.ReplicaSet) (int32, error) {
	minAvailable := replicas(s.d) - maxUnavailable(s.d)
	available := availableBound(allRSs)
	if available <= minAvailable {
		return 0, nil
	}
	olds := append([]*appsv1.ReplicaSet(nil), oldRSs...)
	sortByCreation(olds)
	budget := available - minAvailable
	var total int32
	for _, rs := range olds {
		if total >= budget {
			break
		}
		if rsReplicas(rs) == 0 {
			continue
		}
		n := min(rsReplicas(rs), budget-total)
		if _, _, err := s.scaleReplicaSet(ctx, rs, rsReplicas(rs)-n); err != nil {
			return total, err
		}
		total += n
	}
	return total, nil
}

// syncRolloutStatus writes the rollout status (see rolloutStatus) when it
// changed, and schedules the progress-deadline re-check of a rollout that
// is still under way.
func (s *syncer) syncRolloutStatus(ctx context.Context, allRSs []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) error {
	st := rolloutStatus(allRSs, newRS, s.d, s.now)
	if err := s.syncStatusIfChanged(ctx, st); err != nil {
		return err
	}
	switch after := progressCheckAfter(s.d, &s.d.Status, s.now); {
	case after < 0:
		s.r.checks.cancel(s.req)
	case after == 0:
		s.requeueNow = true
	default:
		s.r.checks.schedule(s.req, s.now.Add(after))
	}
	return nil
}
