package statefulset

import (
	"context"
	"errors"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/setpoint-dev/setpoint/internal/controllers/controllerref"
	"github.com/setpoint-dev/setpoint/internal/controllers/history"
	"github.com/setpoint-dev/setpoint/internal/controllers/podutil"
	"github.com/setpoint-dev/setpoint/reconcile"
)

// staleRetry is how soon a sync skipped for a stale cache is retried (the
// awaited event usually requeues it sooner).
const staleRetry = time.Second

// Reconcile implements reconcile.Reconciler: one sync of one StatefulSet.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	key := req.Namespace + "/" + req.Name
	set, err := r.setInf.Lister().Namespace(req.Namespace).Get(req.Name)
	if apierrors.IsNotFound(err) {
		r.exp.deleteSet(key)
		r.rvMu.Lock()
		delete(r.setRVs, key)
		r.rvMu.Unlock()
		r.metrics.forget(req.Namespace, req.Name)
		return reconcile.Result{}, nil
	}
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("get statefulset %s from cache: %w", key, err)
	}
	// Act only on caches that show our own last writes.
	if !r.exp.satisfied(key) {
		r.metrics.staleSkips.WithLabelValues("", "pods").Inc()
		return reconcile.Result{RequeueAfter: staleRetry}, nil
	}
	if r.setCacheStale(set) {
		r.metrics.staleSkips.WithLabelValues("apps", "statefulsets").Inc()
		return reconcile.Result{RequeueAfter: staleRetry}, nil
	}
	selector, err := metav1.LabelSelectorAsSelector(set.Spec.Selector)
	if err != nil {
		return reconcile.Result{}, reconcile.TerminalError(fmt.Errorf("statefulset %s: invalid selector: %w", key, err))
	}
	if err := r.adoptOrphanRevisions(ctx, set, selector); err != nil {
		return reconcile.Result{}, err
	}
	pods, err := r.claimPods(ctx, set, selector)
	if err != nil {
		return reconcile.Result{}, err
	}
	return r.syncSet(ctx, set.DeepCopy(), selector, pods)
}

// syncSet is the control loop for a set and its claimed pods: revisions,
// pods, status, history.
func (r *reconciler) syncSet(ctx context.Context, set *appsv1.StatefulSet, selector labels.Selector, pods []*corev1.Pod) (reconcile.Result, error) {
	revs, err := r.history.List(set, selector)
	if err != nil {
		return reconcile.Result{}, err
	}
	history.Sort(revs)
	current, update, collisions, err := r.revisions(ctx, set, revs)
	if err != nil {
		return reconcile.Result{}, errors.Join(err, r.truncateHistory(ctx, set, pods, revs, current, update))
	}
	currentSet, err := applyRevision(set, current)
	if err != nil {
		return reconcile.Result{}, err
	}
	updateSet, err := applyRevision(set, update)
	if err != nil {
		return reconcile.Result{}, err
	}
	now := r.clock.Now()
	p := newPlan(set, currentSet, updateSet, current, update, pods, now)
	var manageErr error
	rolled := 0
	if set.DeletionTimestamp == nil {
		rolled, manageErr = r.manage(ctx, p)
	}
	st := computeStatus(set, current, update, collisions, now, p.replicas, p.condemned)
	st.CurrentReplicas -= int32(rolled)
	statusErr := r.writeStatus(ctx, set, st)
	histErr := r.truncateHistory(ctx, set, pods, revs, current, update)
	if err := errors.Join(manageErr, statusErr, histErr); err != nil {
		return reconcile.Result{}, err
	}
	return reconcile.Result{RequeueAfter: nextAvailableCheck(set, pods, st, now)}, nil
}

// nextAvailableCheck returns when to sync again for pods that are ready
// but not yet available (minReadySeconds), 0 if none.
func nextAvailableCheck(set *appsv1.StatefulSet, pods []*corev1.Pod, st appsv1.StatefulSetStatus, now time.Time) time.Duration {
	minReady := set.Spec.MinReadySeconds
	if minReady <= 0 || st.ReadyReplicas == st.AvailableReplicas {
		return 0
	}
	next := time.Duration(minReady) * time.Second
	for _, p := range pods {
		if at, ready := podutil.AvailableAt(p, minReady); ready && at.After(now) && at.Sub(now) < next {
			next = at.Sub(now)
		}
	}
	// Wake just after the boundary so the pod counts as available.
	return next + 10*time.Millisecond
}

// claimPods returns the pods set controls after adopting matching orphans
// named as its members and releasing controlled pods that stopped matching
// (or are not named as members).
func (r *reconciler) claimPods(ctx context.Context, set *appsv1.StatefulSet, selector labels.Selector) ([]*corev1.Pod, error) {
	cands, err := controllerref.Candidates(r.podInf.Indexer(), set)
	if err != nil {
		return nil, fmt.Errorf("statefulset %s: pods from cache: %w", keyOf(set), err)
	}
	claimer := controllerref.New(set, setGVK, selector, controllerref.PatchWith(r.pods), r.canAdopt(set))
	pods, err := claimer.Claim(ctx, cands, func(p *corev1.Pod) bool { return isMemberOf(set, p) })
	if err != nil {
		return nil, fmt.Errorf("statefulset %s: claim pods: %w", keyOf(set), err)
	}
	return pods, nil
}

// canAdopt rechecks, with an uncached read, that set still exists with
// its UID and is not being deleted.
func (r *reconciler) canAdopt(set *appsv1.StatefulSet) func(context.Context) error {
	return controllerref.RecheckDeletionTimestamp(set, func(ctx context.Context) (metav1.Object, error) {
		return r.sets.Namespace(set.Namespace).Get(ctx, set.Name, metav1.GetOptions{})
	})
}

// adoptOrphanRevisions makes set the controller of the orphan revisions
// its selector matches.
func (r *reconciler) adoptOrphanRevisions(ctx context.Context, set *appsv1.StatefulSet, selector labels.Selector) error {
	revs, err := r.history.List(set, selector)
	if err != nil {
		return err
	}
	var orphans []*appsv1.ControllerRevision
	for _, rv := range revs {
		if metav1.GetControllerOfNoCopy(rv) == nil {
			orphans = append(orphans, rv)
		}
	}
	if len(orphans) == 0 {
		return nil
	}
	if err := r.canAdopt(set)(ctx); err != nil {
		return fmt.Errorf("can't adopt ControllerRevisions: %w", err)
	}
	for _, rv := range orphans {
		if _, err := r.history.Adopt(ctx, set, setGVK, rv); err != nil {
			return err
		}
	}
	return nil
}
