package deployment

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/controllers/controllerref"
	"github.com/setpoint-dev/setpoint/reconcile"
)

// Reconcile implements reconcile.Reconciler: one sync of one Deployment,
// in Kubernetes' order (see the package documentation).
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	cached, err := r.dInf.Lister().Namespace(req.Namespace).Get(req.Name)
	if apierrors.IsNotFound(err) {
		r.checks.cancel(req)
		return reconcile.Result{}, nil
	}
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("get deployment %s: %w", req, err)
	}
	d := cached.DeepCopy()
	s := &syncer{r: r, d: d, req: req, now: r.clock.Now()}
	if err := s.run(ctx); err != nil {
		return reconcile.Result{}, err
	}
	if s.requeueNow {
		return reconcile.Result{Requeue: true}, nil
	}
	return reconcile.Result{}, nil
}

// syncer is the state of one sync. d is the sync's own copy of the
// Deployment; every write of its status replaces it with the server's
// answer, so later writes in the same sync carry the new resourceVersion.
type syncer struct {
	r   *reconciler
	d   *appsv1.Deployment
	req reconcile.Request
	now time.Time
	// requeueNow asks for a rate-limited requeue (a progress check due in
	// less than a second).
	requeueNow bool
}

func (s *syncer) run(ctx context.Context) error {
	d := s.d
	if d.Spec.Selector == nil || (len(d.Spec.Selector.MatchLabels) == 0 && len(d.Spec.Selector.MatchExpressions) == 0) {
		s.r.recorder.Event(d, corev1.EventTypeWarning, "SelectingAll", "This deployment is selecting all pods. A non-empty selector is required.")
		if d.Status.ObservedGeneration < d.Generation {
			d.Status.ObservedGeneration = d.Generation
			return s.updateStatus(ctx)
		}
		return nil
	}
	rsList, err := s.claimReplicaSets(ctx)
	if err != nil {
		return err
	}
	if d.DeletionTimestamp != nil {
		return s.syncStatusOnly(ctx, rsList)
	}
	if err := s.checkPausedConditions(ctx); err != nil {
		return err
	}
	if s.d.Spec.Paused {
		return s.sync(ctx, rsList)
	}
	if s.isScalingEvent(rsList) {
		return s.sync(ctx, rsList)
	}
	switch s.d.Spec.Strategy.Type {
	case appsv1.RecreateDeploymentStrategyType:
		return s.rolloutRecreate(ctx, rsList)
	case appsv1.RollingUpdateDeploymentStrategyType:
		return s.rolloutRolling(ctx, rsList)
	}
	return fmt.Errorf("deployment %s: unexpected strategy type %q", s.req, s.d.Spec.Strategy.Type)
}

// claimReplicaSets returns the ReplicaSets the Deployment controls after
// adopting matching orphans and releasing controlled ones that stopped
// matching (package controllerref). Candidates come from the index of
// ReplicaSets by controller UID: the Deployment's own plus the orphans of
// its namespace. The result holds cache objects: never modify them.
func (s *syncer) claimReplicaSets(ctx context.Context) ([]*appsv1.ReplicaSet, error) {
	sel, err := selectorOf(s.d)
	if err != nil {
		return nil, fmt.Errorf("deployment %s: selector: %w", s.req, err)
	}
	cands, err := controllerref.Candidates(s.r.rsInf.Indexer(), s.d)
	if err != nil {
		return nil, fmt.Errorf("deployment %s: list replica sets: %w", s.req, err)
	}
	d := s.d
	canAdopt := controllerref.RecheckDeletionTimestamp(d, func(ctx context.Context) (metav1.Object, error) {
		return s.r.deploys.Namespace(d.Namespace).Get(ctx, d.Name, metav1.GetOptions{})
	})
	m := controllerref.New(d, deployGVK, sel, controllerref.PatchWith(s.r.rss), canAdopt)
	owned, err := m.Claim(ctx, cands)
	if err != nil {
		return nil, fmt.Errorf("deployment %s: claim replica sets: %w", s.req, err)
	}
	// An adopted ReplicaSet is returned as it was before the patch, without
	// our reference; later writes must not drop it, so reread those.
	for i, rs := range owned {
		if ref := controllerOf(rs.OwnerReferences); ref == nil || ref.UID != d.UID {
			fresh, err := s.r.rss.Namespace(rs.Namespace).Get(ctx, rs.Name, metav1.GetOptions{})
			if err != nil {
				return nil, fmt.Errorf("deployment %s: reread adopted replica set %s: %w", s.req, rs.Name, err)
			}
			owned[i] = fresh
		}
	}
	return owned, nil
}

// updateStatus writes s.d's status through the status subresource and
// takes the server's answer as s.d.
func (s *syncer) updateStatus(ctx context.Context) error {
	out, err := s.r.deploys.Namespace(s.d.Namespace).UpdateStatus(ctx, s.d, metav1.UpdateOptions{})
	if err != nil {
		return fmt.Errorf("deployment %s: update status: %w", s.req, err)
	}
	s.d = out
	return nil
}

// syncStatusIfChanged writes st unless it equals the current status.
func (s *syncer) syncStatusIfChanged(ctx context.Context, st appsv1.DeploymentStatus) error {
	if equality.Semantic.DeepEqual(s.d.Status, st) {
		return nil
	}
	s.d.Status = st
	return s.updateStatus(ctx)
}

// checkPausedConditions records pausing and resuming in the Progressing
// condition (reason DeploymentPaused / DeploymentResumed, status Unknown),
// so that the time spent paused never counts against the progress
// deadline. A timed-out condition is left alone.
func (s *syncer) checkPausedConditions(ctx context.Context) error {
	d := s.d
	if !hasProgressDeadline(d) {
		return nil
	}
	cond := getCondition(d.Status, appsv1.DeploymentProgressing)
	if cond != nil && cond.Reason == ReasonTimedOut {
		return nil
	}
	pausedCond := cond != nil && cond.Reason == ReasonPaused
	switch {
	case d.Spec.Paused && !pausedCond:
		setCondition(&d.Status, newCondition(appsv1.DeploymentProgressing, corev1.ConditionUnknown, ReasonPaused, "Deployment is paused", s.now))
	case !d.Spec.Paused && pausedCond:
		setCondition(&d.Status, newCondition(appsv1.DeploymentProgressing, corev1.ConditionUnknown, ReasonResumed, "Deployment is resumed", s.now))
	default:
		return nil
	}
	return s.updateStatus(ctx)
}

// isScalingEvent tells whether spec.replicas changed since the active
// ReplicaSets were sized (their desired-replicas annotation differs).
func (s *syncer) isScalingEvent(rsList []*appsv1.ReplicaSet) bool {
	newRS, oldRSs := splitReplicaSets(s.d, rsList)
	for _, rs := range filterActive(append(oldRSs, newRS)) {
		if desired, ok := intAnnotation(rs, DesiredReplicasAnnotation); ok && desired != replicas(s.d) {
			return true
		}
	}
	return false
}

// splitReplicaSets finds the new ReplicaSet (the oldest whose template
// equals the Deployment's, ignoring the hash label) and the others.
func splitReplicaSets(d *appsv1.Deployment, rsList []*appsv1.ReplicaSet) (*appsv1.ReplicaSet, []*appsv1.ReplicaSet) {
	sorted := append([]*appsv1.ReplicaSet(nil), rsList...)
	sortByCreation(sorted)
	var newRS *appsv1.ReplicaSet
	for _, rs := range sorted {
		if equalIgnoreHash(&rs.Spec.Template, &d.Spec.Template) {
			newRS = rs
			break
		}
	}
	olds := make([]*appsv1.ReplicaSet, 0, len(sorted))
	for _, rs := range sorted {
		if rs != newRS {
			olds = append(olds, rs)
		}
	}
	return newRS, olds
}
