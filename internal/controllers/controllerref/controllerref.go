package controllerref

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/setpoint-dev/setpoint/rest"
)

// PatchFunc sends the strategic merge patch data to the dependent obj (its
// namespace and name) and returns the server's error.
type PatchFunc[T metav1.Object] func(ctx context.Context, obj T, data []byte) error

// PatchWith returns a PatchFunc that patches through res.
func PatchWith[T interface {
	metav1.Object
	runtime.Object
}, L runtime.Object](res *rest.Resource[T, L]) PatchFunc[T] {
	return func(ctx context.Context, obj T, data []byte) error {
		_, err := res.Namespace(obj.GetNamespace()).Patch(ctx, obj.GetName(), types.StrategicMergePatchType, data, metav1.PatchOptions{})
		return err
	}
}

// Manager claims dependents of type T for one owner during one sync.
type Manager[T metav1.Object] struct {
	// owner is the controller as read at the start of the sync; never
	// modified.
	owner metav1.Object
	// ownerGVK names the owner's kind in the ownerReferences it writes.
	ownerGVK schema.GroupVersionKind
	// selector picks the dependents the owner wants.
	selector labels.Selector
	patch    PatchFunc[T]
	canAdopt func(ctx context.Context) error

	// once guards adoptErr: CanAdopt's result, computed at the first
	// adoption and reused for the rest of this Manager's life.
	once     sync.Once
	adoptErr error
}

// New returns a Manager for owner of kind gvk selecting with selector.
// canAdopt is asked once, before the first adoption; nil allows adoption.
func New[T metav1.Object](owner metav1.Object, gvk schema.GroupVersionKind, selector labels.Selector,
	patch PatchFunc[T], canAdopt func(ctx context.Context) error) *Manager[T] {
	return &Manager[T]{owner: owner, ownerGVK: gvk, selector: selector, patch: patch, canAdopt: canAdopt}
}

// Claim returns the objects of objs that the owner controls once it has
// adopted and released what it should. filters further restrict which
// objects match (all must pass). Objects that vanished during the claim
// are left out; other errors are joined and returned with the result.
func (m *Manager[T]) Claim(ctx context.Context, objs []T, filters ...func(T) bool) ([]T, error) {
	var claimed []T
	var errs []error
	match := func(obj T) bool {
		if !m.selector.Matches(labels.Set(obj.GetLabels())) {
			return false
		}
		for _, f := range filters {
			if !f(obj) {
				return false
			}
		}
		return true
	}
	for _, obj := range objs {
		ok, err := m.claimOne(ctx, obj, match)
		if err != nil {
			errs = append(errs, err)
		}
		if ok {
			claimed = append(claimed, obj)
		}
	}
	return claimed, errors.Join(errs...)
}

// claimOne decides one object.
func (m *Manager[T]) claimOne(ctx context.Context, obj T, match func(T) bool) (bool, error) {
	ref := metav1.GetControllerOfNoCopy(obj)
	ownerDeleting := m.owner.GetDeletionTimestamp() != nil
	if ref != nil {
		if ref.UID != m.owner.GetUID() {
			return false, nil
		}
		if match(obj) {
			return true, nil
		}
		if ownerDeleting {
			return false, nil
		}
		return false, m.Release(ctx, obj)
	}
	if ownerDeleting || !match(obj) || obj.GetDeletionTimestamp() != nil ||
		obj.GetNamespace() != m.owner.GetNamespace() {
		return false, nil
	}
	adopted, err := m.Adopt(ctx, obj)
	return adopted, err
}

// Adopt makes the owner obj's controller. It reports false without error
// when the object is gone or was replaced (404/422).
func (m *Manager[T]) Adopt(ctx context.Context, obj T) (bool, error) {
	m.once.Do(func() {
		if m.canAdopt != nil {
			m.adoptErr = m.canAdopt(ctx)
		}
	})
	if m.adoptErr != nil {
		return false, fmt.Errorf("can't adopt %s %s/%s: %w", kindOf(obj), obj.GetNamespace(), obj.GetName(), m.adoptErr)
	}
	data, err := AdoptPatch(m.owner, m.ownerGVK, obj.GetUID())
	if err != nil {
		return false, err
	}
	if err := m.patch(ctx, obj, data); err != nil {
		if gone(err) {
			return false, nil
		}
		return false, fmt.Errorf("adopt %s/%s: %w", obj.GetNamespace(), obj.GetName(), err)
	}
	return true, nil
}

// Release removes the owner's controller reference from obj. A vanished
// or replaced object is not an error.
func (m *Manager[T]) Release(ctx context.Context, obj T) error {
	data, err := ReleasePatch(m.owner.GetUID(), obj.GetUID())
	if err != nil {
		return err
	}
	if err := m.patch(ctx, obj, data); err != nil && !gone(err) {
		return fmt.Errorf("release %s/%s: %w", obj.GetNamespace(), obj.GetName(), err)
	}
	return nil
}

// gone reports a patch answer meaning the object is no longer the one we
// looked at.
func gone(err error) bool { return apierrors.IsNotFound(err) || apierrors.IsInvalid(err) }

func kindOf(obj metav1.Object) string { return fmt.Sprintf("%T", obj) }

type patchRef struct {
	APIVersion         string    `json:"apiVersion,omitempty"`
	Kind               string    `json:"kind,omitempty"`
	Name               string    `json:"name,omitempty"`
	UID                types.UID `json:"uid"`
	Controller         *bool     `json:"controller,omitempty"`
	BlockOwnerDeletion *bool     `json:"blockOwnerDeletion,omitempty"`
	Patch              string    `json:"$patch,omitempty"`
}

type patchDoc struct {
	Metadata struct {
		OwnerReferences []patchRef `json:"ownerReferences"`
		UID             types.UID  `json:"uid"`
	} `json:"metadata"`
}

// AdoptPatch returns the strategic merge patch that adds owner as the
// controller of the object with UID uid.
func AdoptPatch(owner metav1.Object, gvk schema.GroupVersionKind, uid types.UID) ([]byte, error) {
	t := true
	var d patchDoc
	d.Metadata.UID = uid
	d.Metadata.OwnerReferences = []patchRef{{
		APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: owner.GetName(), UID: owner.GetUID(),
		Controller: &t, BlockOwnerDeletion: &t,
	}}
	return json.Marshal(d)
}

// ReleasePatch returns the strategic merge patch that removes the
// ownerReference with UID ownerUID from the object with UID uid.
func ReleasePatch(ownerUID, uid types.UID) ([]byte, error) {
	var d patchDoc
	d.Metadata.UID = uid
	d.Metadata.OwnerReferences = []patchRef{{UID: ownerUID, Patch: "delete"}}
	return json.Marshal(d)
}

// RecheckDeletionTimestamp returns a CanAdopt check: get must read the
// owner from the server (not from a cache); the check fails if the owner
// is gone, has another UID, or is being deleted.
func RecheckDeletionTimestamp(owner metav1.Object, get func(ctx context.Context) (metav1.Object, error)) func(context.Context) error {
	return func(ctx context.Context) error {
		fresh, err := get(ctx)
		if err != nil {
			return fmt.Errorf("recheck owner %s/%s: %w", owner.GetNamespace(), owner.GetName(), err)
		}
		if fresh.GetUID() != owner.GetUID() {
			return fmt.Errorf("owner %s/%s is gone: found uid %s, wanted %s",
				owner.GetNamespace(), owner.GetName(), fresh.GetUID(), owner.GetUID())
		}
		if fresh.GetDeletionTimestamp() != nil {
			return fmt.Errorf("owner %s/%s has just been deleted at %v",
				owner.GetNamespace(), owner.GetName(), fresh.GetDeletionTimestamp())
		}
		return nil
	}
}
