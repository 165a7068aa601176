package core

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	policyv1beta1 "k8s.io/api/policy/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// pods/eviction deletes a pod unless a PodDisruptionBudget of its
// namespace forbids it, as kube-apiserver's eviction REST does: terminal,
// pending and terminating pods go without a budget check; a pod with more
// than one matching budget is a 500; a budget whose status allows no
// disruption is a 429 (cause DisruptionBudget); otherwise its
// disruptionsAllowed is decremented and the pod recorded in disruptedPods
// before the pod is deleted with the Eviction's DeleteOptions (after a
// DisruptionTarget condition is set on it).

var (
	evictionGVK        = policyv1.SchemeGroupVersion.WithKind("Eviction")
	evictionV1beta1GVK = policyv1beta1.SchemeGroupVersion.WithKind("Eviction")
	pdbGVR             = policyv1.SchemeGroupVersion.WithResource("poddisruptionbudgets")
	// podKindGR is how kube-apiserver names pods in an eviction's
	// precondition conflicts.
	podKindGR = schema.GroupResource{Resource: "Pod"}
)

// maxDisruptedPods is kube-apiserver's MaxDisruptedPodSize.
const maxDisruptedPods = 2000

// evictionRetries bounds the retries of conflicting writes.
const evictionRetries = 20

func evictionSubresource() registry.Subresource {
	return registry.Subresource{
		Name: "eviction", Kind: evictionGVK, Verbs: []string{"create"},
		Action: &registry.Action{
			NewBody: func() runtime.Object { return &policyv1.Eviction{} },
			Accepts: []schema.GroupVersionKind{evictionV1beta1GVK},
			Do: func(ctx context.Context, env registry.Env, req registry.Request, body runtime.Object) (runtime.Object, error) {
				ev, err := asEviction(body)
				if err != nil {
					return nil, err
				}
				return evict(ctx, env, req, ev)
			},
		},
	}
}

// asEviction reads a policy/v1 or policy/v1beta1 Eviction (the same
// fields).
func asEviction(body runtime.Object) (*policyv1.Eviction, error) {
	switch b := body.(type) {
	case *policyv1.Eviction:
		return b, nil
	case *policyv1beta1.Eviction:
		return &policyv1.Eviction{ObjectMeta: b.ObjectMeta, DeleteOptions: b.DeleteOptions}, nil
	}
	return nil, apierrors.NewBadRequest(fmt.Sprintf("not a Eviction object: %T", body))
}

// evict is kube-apiserver's eviction: see the top of the file.
func evict(ctx context.Context, env registry.Env, req registry.Request, ev *policyv1.Eviction) (runtime.Object, error) {
	if ev.Name != req.Name {
		return nil, apierrors.NewBadRequest("name in URL does not match name in Eviction object")
	}
	opts, err := evictionDeleteOptions(ev, req.DryRun)
	if err != nil {
		return nil, err
	}
	pod, deleted, err := evictWithoutBudget(ctx, env, req, opts)
	if err != nil || deleted {
		return evictionResult(err)
	}
	pdbs, err := podBudgets(ctx, env, pod)
	switch {
	case err != nil:
		return nil, err
	case len(pdbs) > 1:
		return nil, unknownError("This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.")
	}
	guardRV := false
	if len(pdbs) == 1 {
		if guardRV, err = chargeBudget(ctx, env, pod, pdbs[0], isDryRun(opts)); err != nil {
			return nil, err
		}
	}
	del := opts
	if guardRV {
		del = withResourceVersion(opts, pod.ResourceVersion)
	}
	err = markAndDelete(ctx, env, pod, del)
	if apierrors.IsConflict(err) && guardRV && !hasResourceVersion(opts) {
		return nil, budgetBusy(pdbs[0].Name)
	}
	return evictionResult(err)
}

// evictionResult is the answer of a done eviction: 201 and a success
// Status.
func evictionResult(err error) (runtime.Object, error) {
	if err != nil {
		return nil, err
	}
	return &metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status: metav1.StatusSuccess, Code: http.StatusCreated}, nil
}

// evictionDeleteOptions are the Eviction's DeleteOptions with the
// request's dry run, which must agree with the body's.
func evictionDeleteOptions(ev *policyv1.Eviction, dryRun bool) (*metav1.DeleteOptions, error) {
	var reqDry []string
	if dryRun {
		reqDry = []string{metav1.DryRunAll}
	}
	if ev.DeleteOptions == nil {
		return &metav1.DeleteOptions{DryRun: reqDry}, nil
	}
	opts := ev.DeleteOptions.DeepCopy()
	switch {
	case len(opts.DryRun) == 0:
		opts.DryRun = reqDry
	case len(reqDry) > 0 && !reflect.DeepEqual(reqDry, opts.DryRun):
		return nil, unknownError(fmt.Sprintf("Non-matching dry-run options in request and content: %v and %v", reqDry, opts.DryRun))
	}
	return opts, nil
}

func isDryRun(opts *metav1.DeleteOptions) bool { return len(opts.DryRun) > 0 }

func hasResourceVersion(opts *metav1.DeleteOptions) bool {
	return opts.Preconditions != nil && opts.Preconditions.ResourceVersion != nil
}

// withResourceVersion guards a deletion by the pod's resourceVersion.
func withResourceVersion(opts *metav1.DeleteOptions, rv string) *metav1.DeleteOptions {
	out := opts.DeepCopy()
	if out.Preconditions == nil {
		out.Preconditions = &metav1.Preconditions{}
	}
	out.Preconditions.ResourceVersion = &rv
	return out
}

// evictWithoutBudget deletes a pod that needs no budget check (terminal,
// pending, terminating); it returns the pod read and whether it deleted
// it. Conflicts are retried unless the client named a resourceVersion.
func evictWithoutBudget(ctx context.Context, env registry.Env, req registry.Request, opts *metav1.DeleteOptions) (*corev1.Pod, bool, error) {
	for attempt := 0; ; attempt++ {
		pod, err := getPod(ctx, env, req.Namespace, req.Name)
		if err != nil {
			return nil, false, err
		}
		if !canIgnoreBudget(pod) {
			return pod, false, nil
		}
		del := opts
		terminal := isPodTerminal(pod.Status.Phase) || pod.DeletionTimestamp != nil
		if !terminal && !hasResourceVersion(opts) {
			del = withResourceVersion(opts, pod.ResourceVersion) // no race with the pod turning ready
		}
		err = markAndDelete(ctx, env, pod, del)
		if err == nil || !apierrors.IsConflict(err) || hasResourceVersion(opts) || attempt >= evictionRetries {
			return pod, err == nil, err
		}
	}
}

// canIgnoreBudget: terminal, pending and terminating pods are evicted
// without a budget check.
func canIgnoreBudget(pod *corev1.Pod) bool {
	return isPodTerminal(pod.Status.Phase) || pod.Status.Phase == corev1.PodPending || pod.DeletionTimestamp != nil
}

// podBudgets lists the budgets of the pod's namespace whose selector
// matches it (a nil or empty selector matches nothing). None when the
// server serves no budgets.
func podBudgets(ctx context.Context, env registry.Env, pod *corev1.Pod) ([]*policyv1.PodDisruptionBudget, error) {
	objs := env.Objects(pdbGVR)
	if objs == nil {
		return nil, nil
	}
	list, err := objs.List(ctx, pod.Namespace, nil, nil)
	if err != nil {
		return nil, err
	}
	var out []*policyv1.PodDisruptionBudget
	for _, obj := range list {
		pdb, ok := obj.(*policyv1.PodDisruptionBudget)
		if !ok {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err != nil || sel.Empty() || !sel.Matches(labels.Set(pod.Labels)) {
			continue
		}
		out = append(out, pdb)
	}
	return out, nil
}

// chargeBudget checks the pod's budget and takes one disruption from it.
// An unready pod goes without charge when the budget is healthy anyway
// (or its policy is AlwaysAllow): guardRV then reports that the deletion
// must be guarded by the pod's resourceVersion.
func chargeBudget(ctx context.Context, env registry.Env, pod *corev1.Pod, pdb *policyv1.PodDisruptionBudget, dryRun bool) (guardRV bool, err error) {
	if !podIsReady(pod) {
		if p := pdb.Spec.UnhealthyPodEvictionPolicy; p != nil && *p == policyv1.AlwaysAllow {
			return true, nil
		}
		if pdb.Status.CurrentHealthy >= pdb.Status.DesiredHealthy && pdb.Status.DesiredHealthy > 0 {
			return true, nil
		}
	}
	now := metav1.NewTime(env.Clock().Now())
	if dryRun {
		return false, decrementBudget(pdb.DeepCopy(), pod.Name, now)
	}
	_, err = env.Objects(pdbGVR).Mutate(ctx, pdb.Namespace, pdb.Name, func(obj runtime.Object) error {
		cur, ok := obj.(*policyv1.PodDisruptionBudget)
		if !ok {
			return apierrors.NewInternalError(fmt.Errorf("poddisruptionbudget of type %T", obj))
		}
		return decrementBudget(cur, pod.Name, now)
	}, false)
	return false, err
}

// decrementBudget is kube-apiserver's check-and-decrement of a budget.
func decrementBudget(pdb *policyv1.PodDisruptionBudget, podName string, now metav1.Time) error {
	gr := schema.GroupResource{Group: "policy", Resource: "poddisruptionbudget"}
	switch {
	case pdb.Status.ObservedGeneration < pdb.Generation:
		return budgetBusy(pdb.Name)
	case pdb.Status.DisruptionsAllowed < 0:
		return apierrors.NewForbidden(gr, pdb.Name, errors.New("pdb disruptions allowed is negative"))
	case len(pdb.Status.DisruptedPods) > maxDisruptedPods:
		return apierrors.NewForbidden(gr, pdb.Name, errors.New("DisruptedPods map too big - too many evictions not confirmed by PDB controller"))
	case pdb.Status.DisruptionsAllowed == 0:
		err := apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 0)
		err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{Type: policyv1.DisruptionBudgetCause,
			Message: fmt.Sprintf("The disruption budget %s needs %d healthy pods and has %d currently", pdb.Name, pdb.Status.DesiredHealthy, pdb.Status.CurrentHealthy)})
		return err
	}
	pdb.Status.DisruptionsAllowed--
	if pdb.Status.DisruptionsAllowed == 0 {
		if pdb.Status.Conditions == nil {
			pdb.Status.Conditions = []metav1.Condition{}
		}
		apimeta.SetStatusCondition(&pdb.Status.Conditions, metav1.Condition{
			Type: policyv1.DisruptionAllowedCondition, Status: metav1.ConditionFalse, Reason: policyv1.InsufficientPodsReason,
			ObservedGeneration: pdb.Status.ObservedGeneration, LastTransitionTime: now,
		})
	}
	if pdb.Status.DisruptedPods == nil {
		pdb.Status.DisruptedPods = map[string]metav1.Time{}
	}
	pdb.Status.DisruptedPods[podName] = now
	return nil
}

// budgetBusy is the 429 of a budget the disruption controller has not
// caught up with yet.
func budgetBusy(name string) error {
	err := apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 10)
	err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{Type: policyv1.DisruptionBudgetCause,
		Message: fmt.Sprintf("The disruption budget %s is still being processed by the server.", name)})
	return err
}

// markAndDelete sets the DisruptionTarget condition on the pod (unless a
// dry run), checking the deletion's preconditions first, then deletes it
// with opts (a resourceVersion precondition follows the condition's
// write).
func markAndDelete(ctx context.Context, env registry.Env, pod *corev1.Pod, opts *metav1.DeleteOptions) error {
	pods := env.Objects(podsGVR)
	if !isDryRun(opts) {
		now := metav1.NewTime(env.Clock().Now())
		out, err := pods.Mutate(ctx, pod.Namespace, pod.Name, func(obj runtime.Object) error {
			cur := obj.(*corev1.Pod)
			if err := checkPreconditions(cur, opts.Preconditions); err != nil {
				return err
			}
			setDisruptionTarget(cur, now)
			return nil
		}, false)
		if err != nil {
			return err
		}
		if hasResourceVersion(opts) {
			opts = withResourceVersion(opts, out.(*corev1.Pod).ResourceVersion)
		}
	}
	_, _, err := pods.Delete(ctx, pod.Namespace, pod.Name, opts)
	return err
}

// checkPreconditions refuses, with kube-apiserver's messages, a pod whose
// uid or resourceVersion is not the deletion's precondition.
func checkPreconditions(pod *corev1.Pod, pre *metav1.Preconditions) error {
	if pre == nil {
		return nil
	}
	if pre.UID != nil && *pre.UID != "" && *pre.UID != pod.UID {
		return apierrors.NewConflict(podKindGR, pod.Name, fmt.Errorf(
			"the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated", *pre.UID, pod.UID))
	}
	if pre.ResourceVersion != nil && *pre.ResourceVersion != "" && *pre.ResourceVersion != pod.ResourceVersion {
		return apierrors.NewConflict(podKindGR, pod.Name, fmt.Errorf(
			"the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%s). The object might have been modified", *pre.ResourceVersion, pod.ResourceVersion))
	}
	return nil
}

// setDisruptionTarget sets the pod's DisruptionTarget condition as the
// eviction API does; the transition time changes only with the status.
func setDisruptionTarget(pod *corev1.Pod, now metav1.Time) {
	c := corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
		Reason: "EvictionByEvictionAPI", Message: "Eviction API: evicting", LastTransitionTime: now}
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == c.Type {
			if pod.Status.Conditions[i].Status == c.Status {
				c.LastTransitionTime = pod.Status.Conditions[i].LastTransitionTime
			}
			pod.Status.Conditions[i] = c
			return
		}
	}
	pod.Status.Conditions = append(pod.Status.Conditions, c)
}
