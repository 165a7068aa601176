package garbagecollector

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// deleteWorker runs attemptToDelete over the queue until it shuts down.
func (gc *GarbageCollector) deleteWorker(ctx context.Context) {
	for {
		n, shutdown := gc.toDelete.Get()
		if shutdown {
			return
		}
		if gc.processDelete(ctx, n) {
			gc.toDelete.AddRateLimited(n)
		} else {
			gc.toDelete.Forget(n)
		}
		gc.toDelete.Done(n)
	}
}

// processDelete handles one node of the attemptToDelete queue and reports
// whether it must be retried.
func (gc *GarbageCollector) processDelete(ctx context.Context, n *node) (requeue bool) {
	v := gc.g.view(n)
	if v.virtual && !v.inGraph {
		return false // replaced or removed while queued
	}
	err := gc.attemptToDelete(ctx, n, v)
	switch {
	case errors.Is(err, errVirtualDeleteQueued), errors.Is(err, errClusterScopedOwnsNS):
		return false
	case errors.Is(err, errNoMapping):
		gc.log.Debug("garbage collector: unknown kind; retrying", "object", v.id.String(), "err", err)
		return true
	case err != nil:
		if ctx.Err() == nil {
			gc.log.Error("garbage collector: attempt to delete failed", "object", v.id.String(), "err", err)
		}
		return true
	}
	// A virtual node whose object exists is retried until an informer
	// observes it, so that it never lingers in the graph.
	return gc.g.view(n).virtual
}

// attemptToDelete decides the fate of one object from live reads: delete
// it when none of its owners exists (solid), delete it in foreground when
// an owner waits for its dependents, drop references to absent owners.
func (gc *GarbageCollector) attemptToDelete(ctx context.Context, n *node, v view) error {
	if v.beingDeleted && !v.deleting {
		return nil // one-way trip: wait for the final deletion
	}
	latest, namespaced, err := gc.getObject(ctx, v.id)
	switch {
	case apierrors.IsNotFound(err):
		gc.queueVirtualDelete(v.id, namespaced)
		return errVirtualDeleteQueued
	case err != nil:
		return err
	case latest.GetUID() != v.id.UID:
		gc.queueVirtualDelete(v.id, namespaced)
		return errVirtualDeleteQueued
	}
	if v.deleting {
		return gc.processDeletingDependents(ctx, v)
	}
	refs := latest.GetOwnerReferences()
	if len(refs) == 0 {
		return nil
	}
	solid, dangling, waiting, err := gc.classify(ctx, v.id, refs)
	if err != nil {
		return err
	}
	switch {
	case len(solid) != 0:
		if len(dangling) == 0 && len(waiting) == 0 {
			return nil
		}
		return gc.removeOwnerRefs(ctx, v.id, append(uids(dangling), uids(waiting)...)...)
	case len(waiting) != 0 && len(v.dependents) != 0:
		if v.deletingDependentsOfDependents {
			// An owner and a dependent both wait for their dependents: a
			// possible cycle. Stop blocking the owners, then delete.
			if err := gc.unblockOwnerRefs(ctx, v.id); err != nil {
				return err
			}
		}
		return gc.deleteObject(ctx, v.id, metav1.DeletePropagationForeground)
	default:
		policy := metav1.DeletePropagationBackground
		switch fs := latest.GetFinalizers(); {
		case slices.Contains(fs, metav1.FinalizerOrphanDependents):
			policy = metav1.DeletePropagationOrphan
		case slices.Contains(fs, metav1.FinalizerDeleteDependents):
			policy = metav1.DeletePropagationForeground
		}
		return gc.deleteObject(ctx, v.id, policy)
	}
}

// queueVirtualDelete tells the graph builder that the object id names was
// verified absent.
func (gc *GarbageCollector) queueVirtualDelete(id identity, namespaced bool) {
	if !namespaced {
		id.Namespace = ""
	}
	gc.changes.push(event{typ: deleteEvent, virtual: true, obj: objMeta{id: id}})
}

// processDeletingDependents handles an owner deleted in foreground: it
// drops the foregroundDeletion finalizer once no dependent blocks it, and
// meanwhile queues the blocking dependents for deletion.
func (gc *GarbageCollector) processDeletingDependents(ctx context.Context, v view) error {
	if len(v.blocking) == 0 {
		return gc.removeFinalizer(ctx, v.id, metav1.FinalizerDeleteDependents)
	}
	for _, dep := range v.blocking {
		if !gc.g.isDeletingDependents(dep) {
			gc.toDelete.Add(dep)
		}
	}
	return nil
}

// classify sorts references into solid (the owner exists and is not
// deleting its dependents), dangling (absent) and waiting (the owner is
// being deleted in foreground).
func (gc *GarbageCollector) classify(ctx context.Context, item identity, refs []metav1.OwnerReference) (solid, dangling, waiting []metav1.OwnerReference, err error) {
	for _, ref := range refs {
		isDangling, owner, err := gc.isDangling(ctx, ref, item)
		if err != nil {
			return nil, nil, nil, err
		}
		switch {
		case isDangling:
			dangling = append(dangling, ref)
		case owner.GetDeletionTimestamp() != nil && slices.Contains(owner.GetFinalizers(), metav1.FinalizerDeleteDependents):
			waiting = append(waiting, ref)
		default:
			solid = append(solid, ref)
		}
	}
	return solid, dangling, waiting, nil
}

// isDangling reports whether ref names no existing object: none by that
// name where item can have owners (its own namespace for namespaced kinds,
// the cluster for cluster-scoped ones), or one with another uid.
func (gc *GarbageCollector) isDangling(ctx context.Context, ref metav1.OwnerReference, item identity) (bool, *metav1.PartialObjectMetadata, error) {
	r, err := gc.mapper.resourceFor(ref.APIVersion, ref.Kind)
	if err != nil {
		return false, nil, err
	}
	if item.Namespace == "" && r.namespaced {
		gc.recordInvalidOwner(item, ref)
		return false, nil, errClusterScopedOwnsNS
	}
	key := refIdentity(ref, "")
	if r.namespaced {
		key.Namespace = item.Namespace
	}
	if has(gc.absent, key) {
		return true, nil, nil
	}
	owner, _, err := gc.getObject(ctx, key)
	switch {
	case apierrors.IsNotFound(err):
		gc.absent.Add(key, struct{}{})
		return true, nil, nil
	case err != nil:
		return false, nil, fmt.Errorf("get owner %s: %w", key, err)
	case owner.GetUID() != ref.UID:
		gc.absent.Add(key, struct{}{})
		return true, nil, nil
	}
	return false, owner, nil
}

func uids(refs []metav1.OwnerReference) []types.UID {
	out := make([]types.UID, len(refs))
	for i, r := range refs {
		out[i] = r.UID
	}
	return out
}

// orphanWorker runs attemptToOrphan over the queue until it shuts down.
func (gc *GarbageCollector) orphanWorker(ctx context.Context) {
	for {
		n, shutdown := gc.toOrphan.Get()
		if shutdown {
			return
		}
		if err := gc.attemptToOrphan(ctx, n); err != nil {
			if ctx.Err() == nil {
				gc.log.Error("garbage collector: orphaning failed", "owner", gc.g.view(n).id.String(), "err", err)
			}
			gc.toOrphan.AddRateLimited(n)
		} else {
			gc.toOrphan.Forget(n)
		}
		gc.toOrphan.Done(n)
	}
}

// attemptToOrphan removes the references to an owner being deleted with
// the orphan finalizer from all its dependents, in parallel, then removes
// the finalizer so that the owner goes.
func (gc *GarbageCollector) attemptToOrphan(ctx context.Context, n *node) error {
	v := gc.g.view(n)
	sem := make(chan struct{}, orphanPatchParallelism)
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for _, dep := range v.dependentIDs {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := gc.removeOwnerRefs(ctx, dep, v.id.UID); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("orphan dependents of %s: %w", v.id, err)
	}
	return gc.removeFinalizer(ctx, v.id, metav1.FinalizerOrphanDependents)
}
