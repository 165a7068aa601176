package resourcequota

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/setpoint-dev/setpoint/internal/quota"
	"github.com/setpoint-dev/setpoint/reconcile"
	"github.com/setpoint-dev/setpoint/rest"
)

func namespacedName(ns, name string) types.NamespacedName {
	return types.NamespacedName{Namespace: ns, Name: name}
}

// Reconcile recounts one quota and writes its status.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	// From the cache, as kube's controller reads it (its role may list
	// and watch quotas, not get them); a stale copy fails the status
	// update with a conflict and is recounted.
	cached, err := r.quotaInf.Lister().Namespace(req.Namespace).Get(req.Name)
	if apierrors.IsNotFound(err) {
		return reconcile.Result{}, nil
	}
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("get quota %s from cache: %w", req, err)
	}
	q := cached.DeepCopy()
	used, err := r.recount(ctx, q)
	if err != nil {
		return reconcile.Result{}, err
	}
	hard := quota.Add(corev1.ResourceList{}, q.Spec.Hard)
	if quota.Equal(hard, q.Status.Hard) && quota.Equal(used, q.Status.Used) {
		return reconcile.Result{RequeueAfter: r.resync}, nil
	}
	q.Status = corev1.ResourceQuotaStatus{Hard: hard, Used: used}
	if _, err := r.quotas.Namespace(q.Namespace).UpdateStatus(ctx, q, metav1.UpdateOptions{}); err != nil {
		if apierrors.IsNotFound(err) {
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, fmt.Errorf("update status of quota %s: %w", req, err) // a conflict is retried
	}
	r.log.Debug("quota synced", "quota", req.String(), "used", quota.String(used))
	return reconcile.Result{RequeueAfter: r.resync}, nil
}

// recount sums the usage of the namespace's objects the quota covers,
// over its hard names; a name no kind uses keeps its last observation.
func (r *reconciler) recount(ctx context.Context, q *corev1.ResourceQuota) (corev1.ResourceList, error) {
	hardNames := quota.Names(q.Spec.Hard)
	used := quota.Mask(q.Status.Used, hardNames)
	now := r.clock.Now()
	for _, k := range r.kinds {
		matched := k.ev.MatchingResources(hardNames)
		if len(matched) == 0 {
			continue
		}
		objs, err := r.list(ctx, k, q.Namespace)
		if err != nil {
			return nil, err
		}
		sum := corev1.ResourceList{}
		for _, n := range matched {
			sum[n] = resource.MustParse("0")
		}
		for _, obj := range objs {
			ok, err := quota.Matches(q, q.Spec.Hard, k.ev, obj)
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
			u, err := k.ev.Usage(obj, now)
			if err != nil {
				return nil, fmt.Errorf("usage of %s %s/%s: %w", k.gvr.Resource, q.Namespace, nameOf(obj), err)
			}
			sum = quota.Add(sum, quota.Mask(u, matched))
		}
		for n, v := range sum {
			used[n] = v
		}
	}
	return used, nil
}

// list reads the namespace's objects of one kind (a consistent read),
// decoded into the kind's Go type.
func (r *reconciler) list(ctx context.Context, k kindEval, ns string) ([]runtime.Object, error) {
	l, err := rest.Dynamic(r.client, k.gvr, true).Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		if apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err) {
			return nil, nil // not served by this server
		}
		return nil, fmt.Errorf("list %s in %s: %w", k.gvr.Resource, ns, err)
	}
	out := make([]runtime.Object, 0, len(l.Items))
	for i := range l.Items {
		obj := k.res.New()
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(l.Items[i].Object, obj); err != nil {
			return nil, fmt.Errorf("decode %s %s/%s: %w", k.gvr.Resource, ns, l.Items[i].GetName(), err)
		}
		out = append(out, obj)
	}
	return out, nil
}

func nameOf(obj runtime.Object) string {
	if m, ok := obj.(metav1.Object); ok {
		return m.GetName()
	}
	return ""
}
