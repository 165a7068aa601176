package garbagecollector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/setpoint-dev/setpoint/rest"
)

// Outcomes of attemptToDelete that need no retry.
var (
	errVirtualDeleteQueued = errors.New("owner not found; virtual delete event queued")
	errClusterScopedOwnsNS = errors.New("cluster-scoped object names a namespaced owner")
)

// resource returns the metadata-only accessor of the object id names
// (PartialObjectMetadata in protobuf: the collector reads and patches
// metadata only, as kube-controller-manager's through its metadata
// client), bound to its namespace, and whether its kind is namespaced.
func (gc *GarbageCollector) resource(id identity) (*rest.Resource[*metav1.PartialObjectMetadata, *metav1.PartialObjectMetadataList], bool, error) {
	r, err := gc.mapper.resourceFor(id.APIVersion, id.Kind)
	if err != nil {
		return nil, false, err
	}
	ns := ""
	if r.namespaced {
		ns = id.Namespace
	}
	res := rest.For[*metav1.PartialObjectMetadata, *metav1.PartialObjectMetadataList](gc.client, r.gvr, r.namespaced)
	return res.Namespace(ns).MetadataOnly(), r.namespaced, nil
}

// getObject reads the metadata of the object id names from the server
// (never from a cache).
func (gc *GarbageCollector) getObject(ctx context.Context, id identity) (*metav1.PartialObjectMetadata, bool, error) {
	res, namespaced, err := gc.resource(id)
	if err != nil {
		return nil, false, err
	}
	if namespaced && id.Namespace == "" {
		// Named by a cluster-scoped dependent: no such object can exist.
		return nil, true, apierrors.NewNotFound(schema.GroupResource{Resource: id.Kind}, id.Name)
	}
	obj, err := res.Get(ctx, id.Name, metav1.GetOptions{})
	return obj, namespaced, err
}

// deleteObject deletes the object id names, on condition of its uid.
func (gc *GarbageCollector) deleteObject(ctx context.Context, id identity, policy metav1.DeletionPropagation) error {
	res, _, err := gc.resource(id)
	if err != nil {
		return err
	}
	uid := id.UID
	err = res.Delete(ctx, id.Name, metav1.DeleteOptions{PropagationPolicy: &policy,
		Preconditions: &metav1.Preconditions{UID: &uid}})
	if apierrors.IsNotFound(err) {
		return nil // gone already; the informer will tell the graph
	}
	if err != nil {
		return fmt.Errorf("delete %s: %w", id, err)
	}
	gc.log.Debug("garbage collector deleted", "object", id.String(), "propagation", policy)
	return nil
}

// maxPatchAttempts bounds the read-modify-patch retries on conflicts.
const maxPatchAttempts = 5

// patchMeta reads the object id names and, if change modifies its
// metadata (change returns false for "nothing to do"), writes it back
// with a JSON merge patch conditional on the resourceVersion read,
// retrying on conflicts. A missing object or another uid is no error.
func (gc *GarbageCollector) patchMeta(ctx context.Context, id identity, change func(obj *metav1.PartialObjectMetadata) (map[string]any, bool)) error {
	res, _, err := gc.resource(id)
	if err != nil {
		return err
	}
	for attempt := 1; ; attempt++ {
		obj, err := res.Get(ctx, id.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("get %s: %w", id, err)
		}
		if obj.GetUID() != id.UID {
			return nil
		}
		md, ok := change(obj)
		if !ok {
			return nil
		}
		md["resourceVersion"] = obj.GetResourceVersion()
		md["uid"] = string(id.UID)
		body, err := json.Marshal(map[string]any{"metadata": md})
		if err != nil {
			return fmt.Errorf("encode patch of %s: %w", id, err)
		}
		_, err = res.Patch(ctx, id.Name, types.MergePatchType, body, metav1.PatchOptions{})
		switch {
		case err == nil, apierrors.IsNotFound(err):
			return nil
		case apierrors.IsConflict(err) && attempt < maxPatchAttempts:
			continue
		default:
			return fmt.Errorf("patch %s: %w", id, err)
		}
	}
}

// removeFinalizer removes finalizer from the object id names.
func (gc *GarbageCollector) removeFinalizer(ctx context.Context, id identity, finalizer string) error {
	return gc.patchMeta(ctx, id, func(obj *metav1.PartialObjectMetadata) (map[string]any, bool) {
		fs := obj.GetFinalizers()
		if !slices.Contains(fs, finalizer) {
			return nil, false
		}
		fs = slices.DeleteFunc(slices.Clone(fs), func(f string) bool { return f == finalizer })
		var v any = fs
		if len(fs) == 0 {
			v = nil
		}
		return map[string]any{"finalizers": v}, true
	})
}

// removeOwnerRefs removes the references to the given owner uids from the
// object id names.
func (gc *GarbageCollector) removeOwnerRefs(ctx context.Context, id identity, owners ...types.UID) error {
	return gc.patchMeta(ctx, id, func(obj *metav1.PartialObjectMetadata) (map[string]any, bool) {
		refs := obj.GetOwnerReferences()
		kept := slices.DeleteFunc(slices.Clone(refs), func(r metav1.OwnerReference) bool { return slices.Contains(owners, r.UID) })
		if len(kept) == len(refs) {
			return nil, false
		}
		return map[string]any{"ownerReferences": refsValue(kept)}, true
	})
}

// unblockOwnerRefs sets blockOwnerDeletion=false on every reference of the
// object id names (to break a foreground-deletion cycle).
func (gc *GarbageCollector) unblockOwnerRefs(ctx context.Context, id identity) error {
	return gc.patchMeta(ctx, id, func(obj *metav1.PartialObjectMetadata) (map[string]any, bool) {
		refs := obj.GetOwnerReferences()
		changed := false
		f := false
		for i := range refs {
			if blocks(refs[i]) {
				refs[i].BlockOwnerDeletion = &f
				changed = true
			}
		}
		return map[string]any{"ownerReferences": refsValue(refs)}, changed
	})
}

func refsValue(refs []metav1.OwnerReference) any {
	if len(refs) == 0 {
		return nil // a merge patch null removes the field
	}
	return refs
}

// recordInvalidOwner reports, as Kubernetes does, a cluster-scoped object
// that names a namespaced owner.
func (gc *GarbageCollector) recordInvalidOwner(item identity, ref metav1.OwnerReference) {
	gc.log.Info("garbage collector: cluster-scoped object names a namespaced owner; the reference cannot be resolved",
		"object", item.String(), "owner", ref.Kind+"/"+ref.Name)
	if gc.recorder == nil {
		return
	}
	obj := &unstructured.Unstructured{}
	obj.SetAPIVersion(item.APIVersion)
	obj.SetKind(item.Kind)
	obj.SetName(item.Name)
	obj.SetUID(item.UID)
	gc.recorder.Eventf(obj, corev1.EventTypeWarning, "OwnerRefInvalidNamespace",
		"ownerRef [%s/%s, namespace: , name: %s, uid: %s] does not exist in namespace %q",
		ref.APIVersion, ref.Kind, ref.Name, ref.UID, item.Namespace)
}
