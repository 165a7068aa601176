package objects

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/storage"
)

// The finalizers through which deletion requests tell the garbage collector
// what to do with dependents.
const (
	FinalizerOrphan     = metav1.FinalizerOrphanDependents
	FinalizerForeground = metav1.FinalizerDeleteDependents
)

// Delete deletes an object, or begins its deletion when finalizers, a grace
// period or a kind-specific hold keep it. It returns the object as deleted
// (resourceVersion of the deletion) or as now marked, and whether it is
// gone.
func (s *Store) Delete(ctx context.Context, namespace, name string, opts *metav1.DeleteOptions) (runtime.Object, bool, error) {
	if opts == nil {
		opts = &metav1.DeleteOptions{}
	}
	key := s.res.Key(namespace, name)
	for {
		kv, err := s.kv.Get(ctx, key)
		if err != nil {
			return nil, false, s.storageError(err, name)
		}
		obj, err := s.decode(ctx, kv)
		if err != nil {
			return nil, false, apiError(err)
		}
		out, gone, err := s.admitDelete(ctx, kv, obj, opts)
		var conflict *storage.ConflictError
		if errors.As(err, &conflict) && retryConflict(ctx) {
			continue // a concurrent write: re-evaluate against the new state
		}
		if err != nil {
			return nil, false, s.storageError(err, name)
		}
		return out, gone, nil
	}
}

// admitDelete runs the admission chain (mutating, then validating) on a
// delete attempt, then the attempt.
func (s *Store) admitDelete(ctx context.Context, kv storage.KeyValue, obj runtime.Object, opts *metav1.DeleteOptions) (runtime.Object, bool, error) {
	wo := WriteOptions{DryRun: len(opts.DryRun) > 0}
	txn, err := s.admitWrite(ctx, registry.Delete, "", nil, obj, wo)
	if err != nil {
		return nil, false, err
	}
	// kube-apiserver's validating admission sees deletes too (webhooks,
	// policies), after every mutating plugin.
	vtxn, err := s.validateWrite(ctx, registry.Delete, "", nil, obj, wo)
	if err != nil {
		txn.Finish(false)
		return nil, false, err
	}
	out, gone, err := s.tryDelete(ctx, kv, obj, opts)
	stored := err == nil && len(opts.DryRun) == 0
	vtxn.Finish(stored)
	txn.Finish(stored)
	return out, gone, err
}

func (s *Store) tryDelete(ctx context.Context, kv storage.KeyValue, obj runtime.Object, opts *metav1.DeleteOptions) (runtime.Object, bool, error) {
	m := accessor(obj)
	if err := s.checkPreconditions(m, opts.Preconditions); err != nil {
		return nil, false, err
	}
	dryRun := len(opts.DryRun) > 0
	grace := s.gracePeriod(obj, m, opts)
	finalizers := deletionFinalizers(m.GetFinalizers(), opts, s.res)
	changed := !slices.Equal(finalizers, m.GetFinalizers())
	m.SetFinalizers(finalizers)
	beginning := m.GetDeletionTimestamp() == nil
	if beginning {
		if h, ok := s.res.Strategy.(registry.DeletionHolder); ok {
			h.PrepareForDelete(obj)
		}
	}
	if _, graceful := s.res.Strategy.(registry.GracefulDeleteStrategy); !graceful && beginning && !changed && !s.holdsDeletion(obj, m) {
		// As Kubernetes: an object of a kind without graceful deletion
		// that nothing holds is removed as it is, never marked deleting.
		return s.removeNow(ctx, kv, obj, dryRun)
	}
	cur := m.GetDeletionGracePeriodSeconds()
	shortened := cur != nil && grace < *cur
	if grace > 0 || beginning || changed || shortened {
		now := s.clock.Now()
		deadline := metav1.NewTime(now.Add(time.Duration(grace) * time.Second).Truncate(time.Second))
		if old := m.GetDeletionTimestamp(); shortened && old != nil {
			// As Kubernetes (rest.BeforeDelete): a shorter grace period moves
			// the deadline back by the old period and forward by the new one,
			// counting from when the deletion began; never into the past (a
			// graceful request whose time is up gets 1 s).
			deadline = metav1.NewTime(old.Add(time.Duration(grace-*cur) * time.Second))
			if deadline.Time.Before(now) {
				deadline = metav1.NewTime(now.Truncate(time.Second))
				if grace != 0 {
					grace = 1
				}
			}
		}
		if old := m.GetDeletionTimestamp(); old == nil || deadline.Before(old) || shortened {
			m.SetDeletionTimestamp(&deadline)
			if _, holder := s.res.Strategy.(registry.DeletionHolder); !holder {
				// Kinds held by their own rule (namespaces) get a
				// deletion timestamp only, as kube-apiserver marks them.
				m.SetDeletionGracePeriodSeconds(&grace)
			}
			changed = true
		}
		// As Kubernetes (rest.BeforeDelete, markAsDeleting): the write that
		// starts the deletion moves the generation of a kind that has one,
		// so observers of generation see the object is going.
		if beginning && m.GetGeneration() > 0 {
			m.SetGeneration(m.GetGeneration() + 1)
		}
	}
	if !s.holdsDeletion(obj, m) {
		return s.removeNow(ctx, kv, obj, dryRun)
	}
	if !changed || dryRun {
		return obj, false, nil
	}
	value, err := s.encode(ctx, obj)
	if err != nil {
		return nil, false, apiError(err)
	}
	rev, err := s.kv.Update(ctx, kv.Key, value, kv.ModRevision)
	if err != nil {
		return nil, false, err
	}
	if err := setRV(obj, rev); err != nil {
		return nil, false, err
	}
	out, err := s.answer(ctx, value, obj)
	return out, false, err
}

// removeNow deletes the object's key (nothing on a dry run) and returns
// the object with the deletion's resourceVersion.
func (s *Store) removeNow(ctx context.Context, kv storage.KeyValue, obj runtime.Object, dryRun bool) (runtime.Object, bool, error) {
	if dryRun {
		return obj, true, nil
	}
	rev, _, err := s.deleteKey(ctx, kv, obj)
	if err != nil {
		return nil, false, err
	}
	return obj, true, setRV(obj, rev)
}

// checkPreconditions checks a deletion's preconditions as kube-apiserver's
// rest.BeforeDelete does: a 409 Conflict naming the kind (Deployment.apps),
// for a view the stored kind (events.k8s.io/v1 Events: Event, of the core
// group).
func (s *Store) checkPreconditions(m metav1.Object, p *metav1.Preconditions) error {
	if p == nil {
		return nil
	}
	kind := schema.GroupResource{Group: s.gvk.Group, Resource: s.gvk.Kind}
	if v := s.res.View; v != nil {
		kind = schema.GroupResource{Group: v.Group, Resource: v.Kind}
	}
	if w := s.res.PreconditionFailed; w != "" {
		gr := schema.GroupResource{Group: s.res.Group, Resource: s.res.Resource}
		if p.UID != nil && *p.UID != m.GetUID() {
			return apierrors.NewConflict(gr, m.GetName(), fmt.Errorf("%s: UID in precondition: %v, UID in object meta: %v", w, *p.UID, m.GetUID()))
		}
		if p.ResourceVersion != nil && *p.ResourceVersion != m.GetResourceVersion() {
			return apierrors.NewConflict(gr, m.GetName(), fmt.Errorf("%s: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v",
				w, *p.ResourceVersion, m.GetResourceVersion()))
		}
		return nil
	}
	if p.UID != nil && *p.UID != m.GetUID() {
		return apierrors.NewConflict(kind, m.GetName(), fmt.Errorf(
			"the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated", *p.UID, m.GetUID()))
	}
	if p.ResourceVersion != nil && *p.ResourceVersion != m.GetResourceVersion() {
		return apierrors.NewConflict(kind, m.GetName(), fmt.Errorf(
			"the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%s). The object might have been modified", *p.ResourceVersion, m.GetResourceVersion()))
	}
	return nil
}

func (s *Store) gracePeriod(obj runtime.Object, m metav1.Object, opts *metav1.DeleteOptions) int64 {
	g, ok := s.res.Strategy.(registry.GracefulDeleteStrategy)
	if !ok {
		return 0
	}
	if m.GetDeletionTimestamp() != nil {
		// Already being deleted (as Kubernetes' BeforeDelete): only a
		// shorter grace period named by this request changes it; a delete
		// without one leaves the pending deletion as it is.
		cur := m.GetDeletionGracePeriodSeconds()
		switch {
		case cur == nil || *cur <= 0:
			return 0
		case opts.GracePeriodSeconds == nil || *opts.GracePeriodSeconds >= *cur:
			return *cur
		case *opts.GracePeriodSeconds < 0:
			return 1 // negative means 1 s on the delete path
		}
		return *opts.GracePeriodSeconds
	}
	return max(g.GracePeriod(obj, opts.GracePeriodSeconds), 0)
}

// deletionFinalizers records the propagation policy as the garbage
// collector's finalizers: Orphan adds "orphan", Foreground adds
// "foregroundDeletion", Background removes both; no policy keeps what the
// object has, or orphans for kinds that orphan by default (unless the
// object already has either finalizer). Kinds without garbage collection
// (res.NoGarbageCollection) are always deleted as Background.
func deletionFinalizers(current []string, opts *metav1.DeleteOptions, res *registry.Resource) []string {
	var policy metav1.DeletionPropagation
	switch {
	case res.NoGarbageCollection:
		policy = metav1.DeletePropagationBackground
	case opts.PropagationPolicy != nil:
		policy = *opts.PropagationPolicy
	case opts.OrphanDependents != nil && *opts.OrphanDependents: //nolint:staticcheck // still honoured by Kubernetes
		policy = metav1.DeletePropagationOrphan
	case opts.OrphanDependents != nil: //nolint:staticcheck
		policy = metav1.DeletePropagationBackground
	case res.OrphanByDefault && !slices.Contains(current, FinalizerOrphan) && !slices.Contains(current, FinalizerForeground):
		policy = metav1.DeletePropagationOrphan
	default:
		return current
	}
	out := slices.DeleteFunc(slices.Clone(current), func(f string) bool {
		return f == FinalizerOrphan || f == FinalizerForeground
	})
	switch policy {
	case metav1.DeletePropagationOrphan:
		out = append(out, FinalizerOrphan)
	case metav1.DeletePropagationForeground:
		out = append(out, FinalizerForeground)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// deleteKey removes an object's key with compare-and-swap and runs the
// OnDeleted hook.
func (s *Store) deleteKey(ctx context.Context, kv storage.KeyValue, obj runtime.Object) (int64, storage.KeyValue, error) {
	rev, prev, err := s.kv.Delete(ctx, kv.Key, kv.ModRevision)
	if err == nil && s.onDeleted != nil {
		s.onDeleted(ctx, obj)
	}
	return rev, prev, err
}
