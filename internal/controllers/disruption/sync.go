package disruption

import (
	"context"
	"fmt"
	"reflect"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/setpoint-dev/setpoint/internal/controllers/podutil"
	"github.com/setpoint-dev/setpoint/reconcile"
)

// Reconcile syncs one budget's status.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	pdb, err := r.pdbInf.Lister().Namespace(req.Namespace).Get(req.Name)
	if err != nil {
		if apierrors.IsNotFound(err) {
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, err
	}
	recheck, err := r.trySync(ctx, pdb)
	if apierrors.IsConflict(err) {
		return reconcile.Result{}, err
	}
	if err != nil {
		r.log.Error("sync failed", "poddisruptionbudget", req.String(), "err", err)
		if ferr := r.failSafe(ctx, pdb, err); ferr != nil {
			return reconcile.Result{}, ferr
		}
		return reconcile.Result{}, err
	}
	after := r.resync
	if recheck > 0 && recheck < after {
		after = recheck
	}
	return reconcile.Result{RequeueAfter: after}, nil
}

// trySync computes and writes the status; it returns when the budget must
// be looked at again (an evicted pod's deletion is due), 0 for never.
func (r *reconciler) trySync(ctx context.Context, pdb *policyv1.PodDisruptionBudget) (time.Duration, error) {
	pods, err := r.podsOf(pdb)
	if err != nil {
		r.recorder.Eventf(pdb, corev1.EventTypeWarning, "NoPods", "Failed to get pods: %v", err)
		return 0, err
	}
	if len(pods) == 0 {
		r.recorder.Eventf(pdb, corev1.EventTypeNormal, "NoPods", "No matching pods found")
	}
	expected, desired, unmanaged, err := r.expectedPodCount(ctx, pdb, pods)
	if err != nil {
		r.recorder.Eventf(pdb, corev1.EventTypeWarning, "CalculateExpectedPodCountFailed", "Failed to calculate the number of expected pods: %v", err)
		return 0, err
	}
	if len(unmanaged) > 0 {
		r.recorder.Eventf(pdb, corev1.EventTypeWarning, "UnmanagedPods", "Pods selected by this PodDisruptionBudget (selector: %v) were found "+
			"to be unmanaged. As a result, the status of the PDB cannot be calculated correctly, which may result in undefined behavior. "+
			"To account for these pods please set \".spec.minAvailable\" field of the PDB to an integer value.", pdb.Spec.Selector)
	}
	now := r.clock.Now()
	disrupted, recheckAt := r.disruptedPods(pods, pdb, now)
	healthy := countHealthy(pods, disrupted, now)
	if err := r.updateStatus(ctx, pdb, healthy, desired, expected, disrupted); err != nil {
		return 0, err
	}
	if recheckAt.IsZero() {
		return 0, nil
	}
	return recheckAt.Sub(now), nil
}

// podsOf lists the pods of the budget's namespace its selector matches.
func (r *reconciler) podsOf(pdb *policyv1.PodDisruptionBudget) ([]*corev1.Pod, error) {
	sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
	if err != nil {
		return nil, err
	}
	all, err := r.podInf.Lister().Namespace(pdb.Namespace).List(sel)
	if err != nil {
		return nil, err
	}
	return all, nil
}

// expectedPodCount returns expectedPods and desiredHealthy, and the pods
// without a controller when the scale of controllers was needed.
func (r *reconciler) expectedPodCount(ctx context.Context, pdb *policyv1.PodDisruptionBudget, pods []*corev1.Pod) (expected, desired int32, unmanaged []string, err error) {
	switch {
	case pdb.Spec.MaxUnavailable != nil:
		if expected, unmanaged, err = r.expectedScale(ctx, pods); err != nil {
			return 0, 0, nil, err
		}
		maxUnavailable, err := intstr.GetScaledValueFromIntOrPercent(pdb.Spec.MaxUnavailable, int(expected), true)
		if err != nil {
			return 0, 0, nil, err
		}
		desired = max(expected-int32(maxUnavailable), 0)
	case pdb.Spec.MinAvailable != nil && pdb.Spec.MinAvailable.Type == intstr.Int:
		desired, expected = pdb.Spec.MinAvailable.IntVal, int32(len(pods))
	case pdb.Spec.MinAvailable != nil:
		if expected, unmanaged, err = r.expectedScale(ctx, pods); err != nil {
			return 0, 0, nil, err
		}
		minAvailable, err := intstr.GetScaledValueFromIntOrPercent(pdb.Spec.MinAvailable, int(expected), true)
		if err != nil {
			return 0, 0, nil, err
		}
		desired = int32(minAvailable)
	}
	return expected, desired, unmanaged, nil
}

// expectedScale sums the scale of the pods' controllers, each once.
func (r *reconciler) expectedScale(ctx context.Context, pods []*corev1.Pod) (int32, []string, error) {
	scales := map[types.UID]int32{}
	var unmanaged []string
	for _, pod := range pods {
		ref := metav1.GetControllerOf(pod)
		if ref == nil {
			unmanaged = append(unmanaged, pod.Name)
			continue
		}
		if _, ok := scales[ref.UID]; ok {
			continue
		}
		uid, n, found, err := r.scales.scaleOf(ctx, pod.Namespace, ref)
		if err != nil {
			return 0, nil, err
		}
		if !found {
			return 0, nil, fmt.Errorf("found no controllers for pod %q", pod.Name)
		}
		scales[ref.UID] = 0 // this controller is looked up once
		scales[uid] = n
	}
	var sum int32
	for _, n := range scales {
		sum += n
	}
	return sum, unmanaged, nil
}

// disruptedPods keeps the evictions of pods still there, not being
// deleted, and evicted less than DeletionTimeout ago; it returns when the
// oldest kept one expires.
func (r *reconciler) disruptedPods(pods []*corev1.Pod, pdb *policyv1.PodDisruptionBudget, now time.Time) (map[string]metav1.Time, time.Time) {
	out := map[string]metav1.Time{}
	var recheck time.Time
	if pdb.Status.DisruptedPods == nil {
		return out, recheck
	}
	for _, pod := range pods {
		if pod.DeletionTimestamp != nil {
			continue
		}
		at, ok := pdb.Status.DisruptedPods[pod.Name]
		if !ok {
			continue
		}
		due := at.Add(DeletionTimeout)
		if due.Before(now) {
			r.recorder.Eventf(pod, corev1.EventTypeWarning, "NotDeleted", "Pod was expected by PDB %s/%s to be deleted but it wasn't", pdb.Namespace, pdb.Namespace)
			continue
		}
		if recheck.IsZero() || due.Before(recheck) {
			recheck = due
		}
		out[pod.Name] = at
	}
	return out, recheck
}

// countHealthy counts the Ready pods not being deleted nor just evicted.
func countHealthy(pods []*corev1.Pod, disrupted map[string]metav1.Time, now time.Time) int32 {
	var n int32
	for _, pod := range pods {
		if pod.DeletionTimestamp != nil {
			continue
		}
		if at, ok := disrupted[pod.Name]; ok && at.Add(DeletionTimeout).After(now) {
			continue
		}
		if podutil.IsPodReady(pod) {
			n++
		}
	}
	return n
}

// updateStatus writes the status when it differs.
func (r *reconciler) updateStatus(ctx context.Context, pdb *policyv1.PodDisruptionBudget, healthy, desired, expected int32, disrupted map[string]metav1.Time) error {
	allowed := healthy - desired
	if expected <= 0 || allowed <= 0 {
		allowed = 0
	}
	s := pdb.Status
	if s.CurrentHealthy == healthy && s.DesiredHealthy == desired && s.ExpectedPods == expected && s.DisruptionsAllowed == allowed &&
		equalTimes(s.DisruptedPods, disrupted) && s.ObservedGeneration == pdb.Generation && conditionUpToDate(pdb) {
		return nil
	}
	out := pdb.DeepCopy()
	out.Status = policyv1.PodDisruptionBudgetStatus{
		CurrentHealthy: healthy, DesiredHealthy: desired, ExpectedPods: expected, DisruptionsAllowed: allowed,
		DisruptedPods: disrupted, ObservedGeneration: pdb.Generation, Conditions: out.Status.Conditions,
	}
	setAllowedCondition(out)
	_, err := r.pdbs.Namespace(pdb.Namespace).UpdateStatus(ctx, out, metav1.UpdateOptions{})
	return err
}

// setAllowedCondition sets DisruptionAllowed from disruptionsAllowed.
func setAllowedCondition(pdb *policyv1.PodDisruptionBudget) {
	c := metav1.Condition{Type: policyv1.DisruptionAllowedCondition, Reason: policyv1.InsufficientPodsReason,
		Status: metav1.ConditionFalse, ObservedGeneration: pdb.Status.ObservedGeneration}
	if pdb.Status.DisruptionsAllowed > 0 {
		c.Reason, c.Status = policyv1.SufficientPodsReason, metav1.ConditionTrue
	}
	apimeta.SetStatusCondition(&pdb.Status.Conditions, c)
}

// conditionUpToDate: the condition says what disruptionsAllowed says.
func conditionUpToDate(pdb *policyv1.PodDisruptionBudget) bool {
	c := apimeta.FindStatusCondition(pdb.Status.Conditions, policyv1.DisruptionAllowedCondition)
	if c == nil || c.ObservedGeneration != pdb.Status.ObservedGeneration {
		return false
	}
	if pdb.Status.DisruptionsAllowed > 0 {
		return c.Status == metav1.ConditionTrue && c.Reason == policyv1.SufficientPodsReason
	}
	return c.Status == metav1.ConditionFalse && c.Reason == policyv1.InsufficientPodsReason
}

func equalTimes(a, b map[string]metav1.Time) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || !v.Equal(&w) {
			return false
		}
	}
	return true
}

// failSafe writes disruptionsAllowed 0 and DisruptionAllowed False
// (SyncFailed) after a failed sync, so that no eviction is allowed on a
// stale status.
func (r *reconciler) failSafe(ctx context.Context, pdb *policyv1.PodDisruptionBudget, cause error) error {
	out := pdb.DeepCopy()
	out.Status.DisruptionsAllowed = 0
	if out.Status.Conditions == nil {
		out.Status.Conditions = []metav1.Condition{}
	}
	apimeta.SetStatusCondition(&out.Status.Conditions, metav1.Condition{Type: policyv1.DisruptionAllowedCondition,
		Status: metav1.ConditionFalse, Reason: policyv1.SyncFailedReason, Message: cause.Error(), ObservedGeneration: out.Status.ObservedGeneration})
	if reflect.DeepEqual(out.Status, pdb.Status) {
		return nil
	}
	_, err := r.pdbs.Namespace(pdb.Namespace).UpdateStatus(ctx, out, metav1.UpdateOptions{})
	return err
}
