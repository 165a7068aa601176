package endpointslice

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/setpoint-dev/setpoint/reconcile"
)

// staleRetry is how soon a sync that found the cache behind its own
// writes looks again (slice events usually come first).
const staleRetry = 100 * time.Millisecond

// Reconcile implements reconcile.Reconciler: one sync of one Service.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	key := req.NamespacedName
	svc, err := r.svcInf.Lister().Namespace(key.Namespace).Get(key.Name)
	if apierrors.IsNotFound(err) {
		r.triggers.Forget(key.Namespace, key.Name)
		r.tracker.forget(key)
		return reconcile.Result{}, nil
	}
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("get service %s from cache: %w", key, err)
	}
	if svc.Spec.Type == corev1.ServiceTypeExternalName || svc.Spec.Selector == nil || svc.DeletionTimestamp != nil {
		return reconcile.Result{}, nil
	}
	cached, err := r.sliceInf.Indexer().ByIndex(serviceIndex, key.String())
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("slices of service %s from cache: %w", key, err)
	}
	cached = slices.DeleteFunc(slices.Clone(cached), func(s *discoveryv1.EndpointSlice) bool {
		return s.Labels[discoveryv1.LabelManagedBy] != ManagedBy
	})
	if r.tracker.stale(key, cached) {
		return reconcile.Result{RequeueAfter: staleRetry}, nil
	}
	pods, err := r.podInf.Lister().Namespace(svc.Namespace).List(labels.SelectorFromValidatedSet(svc.Spec.Selector))
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("list pods of service %s: %w", key, err)
	}
	trigger, seen := r.triggers.Compute(svc, pods)
	types := addressTypes(svc)
	want, missing := r.desired(svc, pods, types)
	if want == nil {
		return reconcile.Result{}, missing
	}
	p := r.plan(svc, cached, want, types)
	if err := errors.Join(r.apply(ctx, svc, p, trigger), missing); err != nil {
		r.recorder.Eventf(svc, corev1.EventTypeWarning, "FailedToUpdateEndpointSlices",
			"Error updating Endpoint Slices for Service %s/%s: %v", svc.Namespace, svc.Name, err)
		return reconcile.Result{}, err
	}
	r.triggers.Commit(seen)
	return reconcile.Result{}, nil
}

// apply writes the plan: creates, then updates, then deletes (so that no
// endpoint is missing in between), recording what the cache must show.
func (r *reconciler) apply(ctx context.Context, svc *corev1.Service, p *plan, trigger time.Time) error {
	key := keyOf(svc)
	api := r.slices.Namespace(svc.Namespace)
	stamp := func(s *discoveryv1.EndpointSlice) {
		if trigger.IsZero() {
			return
		}
		if s.Annotations == nil {
			s.Annotations = map[string]string{}
		}
		s.Annotations[corev1.EndpointsLastChangeTriggerTime] = trigger.UTC().Format(time.RFC3339Nano)
	}
	var errs []error
	for _, s := range p.create {
		stamp(s)
		out, err := api.Create(ctx, s, createOpts)
		if err != nil {
			if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
				return nil
			}
			errs = append(errs, fmt.Errorf("create endpointslice for %s: %w", key, err))
			continue
		}
		r.tracker.expect(key, out.Name, out.Generation)
	}
	for _, s := range p.update {
		stamp(s)
		out, err := api.Update(ctx, s, updateOpts)
		if err != nil {
			errs = append(errs, fmt.Errorf("update endpointslice %s/%s: %w", s.Namespace, s.Name, err))
			continue
		}
		r.tracker.expect(key, out.Name, out.Generation)
	}
	for _, s := range p.del {
		r.tracker.expect(key, s.Name, deletedGen)
		if err := api.Delete(ctx, s.Name, deleteOpts); err != nil {
			r.tracker.deleted(key, s.Name)
			if !apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("delete endpointslice %s/%s: %w", s.Namespace, s.Name, err))
			}
		}
	}
	return errors.Join(errs...)
}

// sliceLabels are the labels of svc's slices: the Service's (but the
// reserved keys), the headless marker, the Service name and manager.
func sliceLabels(svc *corev1.Service) map[string]string {
	out := make(map[string]string, len(svc.Labels)+3)
	for k, v := range svc.Labels {
		if k == discoveryv1.LabelServiceName || k == discoveryv1.LabelManagedBy {
			continue
		}
		out[k] = v
	}
	if svc.Spec.ClusterIP == corev1.ClusterIPNone || svc.Spec.ClusterIP == "" {
		out[corev1.IsHeadlessService] = ""
	} else {
		delete(out, corev1.IsHeadlessService)
	}
	out[discoveryv1.LabelServiceName] = svc.Name
	out[discoveryv1.LabelManagedBy] = ManagedBy
	return out
}

func labelsEqual(a, b map[string]string) bool { return maps.Equal(a, b) }

// slicePrefix is generateName of svc's slices. A Service name is a
// DNS label, so "<service>-" is always a valid prefix.
func slicePrefix(name string) string { return name + "-" }
