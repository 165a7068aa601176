package replicaset

import (
	"context"
	"errors"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/controllers/controllerref"
	"github.com/setpoint-dev/setpoint/internal/controllers/podutil"
	"github.com/setpoint-dev/setpoint/reconcile"
)

// Reconcile implements reconcile.Reconciler: one sync of one ReplicaSet.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	key := req.Namespace + "/" + req.Name
	rs, err := r.owner.Get(req.Namespace, req.Name)
	if apierrors.IsNotFound(err) {
		r.exp.DeleteExpectations(key)
		return reconcile.Result{}, nil
	}
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("get replicaset %s from cache: %w", key, err)
	}
	// Read expectations before the pods: a pod observed in between is then
	// in the list we act on.
	needsSync := r.exp.SatisfiedExpectations(key)
	selector, err := metav1.LabelSelectorAsSelector(rs.Spec.Selector)
	if err != nil {
		return reconcile.Result{}, reconcile.TerminalError(fmt.Errorf("replicaset %s: invalid selector: %w", key, err))
	}
	candidates, err := controllerref.Candidates(r.podInf.Indexer(), rs)
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("replicaset %s: pods from cache: %w", key, err)
	}
	claimer := controllerref.New(rs, r.gvk, selector, controllerref.PatchWith(r.pods),
		controllerref.RecheckDeletionTimestamp(rs, func(ctx context.Context) (metav1.Object, error) {
			return r.owner.GetLive(ctx, rs.Namespace, rs.Name)
		}))
	pods, err := claimer.Claim(ctx, podutil.FilterActivePods(candidates))
	if err != nil {
		// Acting on a partial claim could create pods for orphans we failed
		// to adopt; retry the sync instead.
		return reconcile.Result{}, fmt.Errorf("replicaset %s: claim pods: %w", key, err)
	}

	var manageErr error
	if needsSync && rs.DeletionTimestamp == nil {
		manageErr = r.manageReplicas(ctx, pods, rs)
	}
	now := r.clock.Now()
	status := calculateStatus(rs, pods, manageErr, now)
	if err := r.updateStatus(ctx, rs, status); err != nil {
		return reconcile.Result{}, errors.Join(err, manageErr)
	}
	if manageErr != nil {
		return reconcile.Result{}, manageErr
	}
	return reconcile.Result{RequeueAfter: nextAvailable(pods, rs.Spec.MinReadySeconds, now)}, nil
}

// nextAvailable returns how long until the first ready but not yet
// available pod becomes available, or 0 if there is none.
func nextAvailable(pods []*corev1.Pod, minReady int32, now time.Time) time.Duration {
	if minReady <= 0 {
		return 0
	}
	var next time.Duration
	for _, p := range pods {
		at, ready := podutil.AvailableAt(p, minReady)
		if !ready || !at.After(now) {
			continue
		}
		if d := at.Sub(now); next == 0 || d < next {
			next = d
		}
	}
	if next > 0 {
		// Wake just after the boundary so the pod counts as available.
		next += 10 * time.Millisecond
	}
	return next
}

// replicasOf returns spec.replicas with its default of 1.
func replicasOf(rs *appsv1.ReplicaSet) int {
	if rs.Spec.Replicas == nil {
		return 1
	}
	return int(*rs.Spec.Replicas)
}
