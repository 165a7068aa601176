package endpoints

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/setpoint-dev/setpoint/internal/controllers/endpointutil"
	"github.com/setpoint-dev/setpoint/reconcile"
)

// Reconcile implements reconcile.Reconciler: one sync of one Service.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	key := req.String()
	svc, err := r.svcInf.Lister().Namespace(req.Namespace).Get(req.Name)
	if apierrors.IsNotFound(err) {
		err := r.eps.Namespace(req.Namespace).Delete(ctx, req.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return reconcile.Result{}, fmt.Errorf("delete endpoints %s: %w", key, err)
		}
		r.triggers.Forget(req.Namespace, req.Name)
		r.stale.forget(key)
		return reconcile.Result{}, nil
	}
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("get service %s from cache: %w", key, err)
	}
	if svc.Spec.Type == corev1.ServiceTypeExternalName || svc.Spec.Selector == nil {
		return reconcile.Result{}, nil
	}
	pods, err := r.podInf.Lister().Namespace(svc.Namespace).List(labels.SelectorFromValidatedSet(svc.Spec.Selector))
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("list pods of service %s: %w", key, err)
	}
	// Computed before the comparison: a sync with nothing to write
	// commits what it saw too.
	trigger, seen := r.triggers.Compute(svc, pods)
	subsets := DesiredSubsets(svc, pods)

	cur, err := r.epInf.Lister().Namespace(svc.Namespace).Get(svc.Name)
	switch {
	case apierrors.IsNotFound(err):
		cur = &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: svc.Name, Namespace: svc.Namespace, Labels: svc.Labels}}
	case err != nil:
		return reconcile.Result{}, fmt.Errorf("get endpoints %s from cache: %w", key, err)
	case r.stale.isStale(key, cur.ResourceVersion):
		return reconcile.Result{}, fmt.Errorf("endpoints informer cache is out of date, resource version %s already processed for endpoints %s", cur.ResourceVersion, key)
	}
	create := cur.ResourceVersion == ""
	compareLabels := cur.Labels
	if _, ok := cur.Labels[corev1.IsHeadlessService]; ok {
		compareLabels = withoutLabel(cur.Labels, corev1.IsHeadlessService)
	}
	if !create && subsetsEqual(cur.Subsets, subsets) && labelsEqual(compareLabels, svc.Labels) &&
		capacityAnnotationCorrect(cur.Annotations, cur.Subsets) {
		r.triggers.Commit(seen)
		return reconcile.Result{}, nil
	}
	next := cur.DeepCopy()
	next.Subsets = subsets
	next.Labels = maps.Clone(svc.Labels)
	if next.Labels == nil {
		next.Labels = map[string]string{}
	}
	if endpointutil.IsServiceIPSet(svc) {
		delete(next.Labels, corev1.IsHeadlessService)
	} else {
		next.Labels[corev1.IsHeadlessService] = ""
	}
	if next.Annotations == nil {
		next.Annotations = map[string]string{}
	}
	if !trigger.IsZero() {
		next.Annotations[corev1.EndpointsLastChangeTriggerTime] = trigger.UTC().Format(time.RFC3339Nano)
	} else {
		delete(next.Annotations, corev1.EndpointsLastChangeTriggerTime)
	}
	if Truncate(next) {
		next.Annotations[corev1.EndpointsOverCapacity] = Truncated
	} else {
		delete(next.Annotations, corev1.EndpointsOverCapacity)
	}
	if err := r.write(ctx, svc, cur, next, create); err != nil {
		return reconcile.Result{}, err
	}
	r.triggers.Commit(seen)
	return reconcile.Result{}, nil
}

// write creates or updates next, recording an event on failure.
func (r *reconciler) write(ctx context.Context, svc *corev1.Service, cur, next *corev1.Endpoints, create bool) error {
	var err error
	if create {
		_, err = r.eps.Namespace(svc.Namespace).Create(ctx, next, metav1.CreateOptions{})
		if err != nil && apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
			return nil
		}
	} else {
		var out *corev1.Endpoints
		out, err = r.eps.Namespace(svc.Namespace).Update(ctx, next, metav1.UpdateOptions{})
		if err == nil && out.ResourceVersion != cur.ResourceVersion {
			r.stale.mark(svc.Namespace+"/"+svc.Name, cur.ResourceVersion)
		}
	}
	if err == nil {
		return nil
	}
	if create {
		r.recorder.Eventf(next, corev1.EventTypeWarning, "FailedToCreateEndpoint",
			"Failed to create endpoint for service %v/%v: %v", svc.Namespace, svc.Name, err)
		return fmt.Errorf("create endpoints %s/%s: %w", svc.Namespace, svc.Name, err)
	}
	r.recorder.Eventf(next, corev1.EventTypeWarning, "FailedToUpdateEndpoint",
		"Failed to update endpoint %v/%v: %v", svc.Namespace, svc.Name, err)
	return fmt.Errorf("update endpoints %s/%s: %w", svc.Namespace, svc.Name, err)
}

func withoutLabel(in map[string]string, k string) map[string]string {
	out := maps.Clone(in)
	delete(out, k)
	return out
}

// labelsEqual treats nil and empty alike.
func labelsEqual(a, b map[string]string) bool { return maps.Equal(a, b) }

// staleTracker remembers, per Endpoints key, the resourceVersion an
// update replaced: a cache still showing it is behind our own write.
type staleTracker struct {
	mu  sync.Mutex
	old map[string]string
}

func newStaleTracker() *staleTracker { return &staleTracker{old: map[string]string{}} }

func (s *staleTracker) mark(key, rv string) {
	s.mu.Lock()
	s.old[key] = rv
	s.mu.Unlock()
}

func (s *staleTracker) isStale(key, rv string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.old[key] == rv
}

func (s *staleTracker) forget(key string) {
	s.mu.Lock()
	delete(s.old, key)
	s.mu.Unlock()
}
