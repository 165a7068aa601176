package deployment

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/setpoint-dev/setpoint/internal/controllers/controllerref"
)

// rolloutRecreate moves a Recreate rollout: scale every old ReplicaSet to
// 0; once none of their pods is left running, create (or find) the new
// ReplicaSet and scale it to spec.replicas; then record the status. New
// pods are never asked for while an old one may still run.
func (s *syncer) rolloutRecreate(ctx context.Context, rsList []*appsv1.ReplicaSet) error {
	// Find the new ReplicaSet without creating it: creating comes after
	// the old pods are gone.
	newRS, oldRSs, err := s.allReplicaSets(ctx, rsList, false)
	if err != nil {
		return err
	}
	allRSs := append(append([]*appsv1.ReplicaSet(nil), oldRSs...), newRS)
	scaledDown := false
	for _, rs := range filterActive(oldRSs) {
		scaled, _, err := s.scaleReplicaSet(ctx, rs, 0)
		if err != nil {
			return err
		}
		scaledDown = scaledDown || scaled
	}
	if scaledDown {
		return s.syncRolloutStatus(ctx, allRSs, newRS)
	}
	running, err := s.oldPodsRunning(newRS, oldRSs)
	if err != nil {
		return err
	}
	if running {
		return s.syncRolloutStatus(ctx, allRSs, newRS)
	}
	if newRS == nil {
		newRS, oldRSs, err = s.allReplicaSets(ctx, rsList, true)
		if err != nil {
			return err
		}
		allRSs = append(append([]*appsv1.ReplicaSet(nil), oldRSs...), newRS)
	}
	if rsReplicas(newRS) != replicas(s.d) {
		if _, _, err := s.scaleReplicaSet(ctx, newRS, replicas(s.d)); err != nil {
			return err
		}
	}
	if deploymentComplete(s.d, &s.d.Status) {
		if err := s.cleanup(ctx, oldRSs); err != nil {
			return err
		}
	}
	return s.syncRolloutStatus(ctx, allRSs, newRS)
}

// oldPodsRunning tells whether an old ReplicaSet still reports pods or any
// pod controlled by one is not Succeeded or Failed (terminating pods
// count: they may still run). Pods come from the pod cache's index by
// controller UID.
func (s *syncer) oldPodsRunning(newRS *appsv1.ReplicaSet, oldRSs []*appsv1.ReplicaSet) (bool, error) {
	if statusTotal(oldRSs) > 0 {
		return true, nil
	}
	for _, rs := range oldRSs {
		if newRS != nil && rs.UID == newRS.UID {
			continue
		}
		pods, err := s.r.podInf.Indexer().ByIndex(controllerref.ControllerUIDIndex, string(rs.UID))
		if err != nil {
			return false, fmt.Errorf("deployment %s: pods of %s: %w", s.req, rs.Name, err)
		}
		for _, p := range pods {
			if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
				return true, nil
			}
		}
	}
	return false, nil
}
