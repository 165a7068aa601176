package controllerutil

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
)

// AlreadyOwnedError is returned by SetControllerReference when another
// object controls the object.
type AlreadyOwnedError struct {
	Object metav1.Object
	Owner  metav1.OwnerReference
}

func (e *AlreadyOwnedError) Error() string {
	return fmt.Sprintf("%s/%s is already controlled by %s %s", e.Object.GetNamespace(), e.Object.GetName(),
		e.Owner.Kind, e.Owner.Name)
}

// SetControllerReference makes owner the controller of object. The owner's
// kind comes from scheme (or from owner's TypeMeta when scheme is nil or
// does not know it). It fails with *AlreadyOwnedError when a different
// object controls object, and when the namespaces are incompatible.
func SetControllerReference(owner Object, object metav1.Object, scheme *runtime.Scheme) error {
	ref, err := ownerRef(owner, object, scheme)
	if err != nil {
		return err
	}
	if cur := metav1.GetControllerOf(object); cur != nil && !sameOwner(*cur, ref) {
		return &AlreadyOwnedError{Object: object, Owner: *cur}
	}
	ref.Controller, ref.BlockOwnerDeletion = ptr.To(true), ptr.To(true)
	upsert(object, ref)
	return nil
}

// SetOwnerReference adds owner to object's ownerReferences, or refreshes
// the existing reference to it (keeping its controller flags).
func SetOwnerReference(owner Object, object metav1.Object, scheme *runtime.Scheme) error {
	ref, err := ownerRef(owner, object, scheme)
	if err != nil {
		return err
	}
	for _, r := range object.GetOwnerReferences() {
		if sameOwner(r, ref) {
			ref.Controller, ref.BlockOwnerDeletion = r.Controller, r.BlockOwnerDeletion
		}
	}
	upsert(object, ref)
	return nil
}

// HasControllerReference reports whether object has a controller.
func HasControllerReference(object metav1.Object) bool {
	return metav1.GetControllerOf(object) != nil
}

func ownerRef(owner Object, object metav1.Object, scheme *runtime.Scheme) (metav1.OwnerReference, error) {
	if ns := owner.GetNamespace(); ns != "" && ns != object.GetNamespace() {
		return metav1.OwnerReference{}, fmt.Errorf("owner %s/%s may not own %s/%s: cross-namespace owner references are not allowed",
			ns, owner.GetName(), object.GetNamespace(), object.GetName())
	}
	gvk := owner.GetObjectKind().GroupVersionKind()
	if scheme != nil {
		if kinds, _, err := scheme.ObjectKinds(owner); err == nil && len(kinds) > 0 {
			gvk = kinds[0]
		}
	}
	if gvk.Kind == "" {
		return metav1.OwnerReference{}, fmt.Errorf("kind of owner %T is unknown: register it in the scheme", owner)
	}
	if owner.GetUID() == "" {
		return metav1.OwnerReference{}, fmt.Errorf("owner %s %s has no uid: read it from the server first", gvk.Kind, owner.GetName())
	}
	return metav1.OwnerReference{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind,
		Name: owner.GetName(), UID: owner.GetUID()}, nil
}

// sameOwner compares references by group, kind and name, ignoring the
// version, as the garbage collector does.
func sameOwner(a, b metav1.OwnerReference) bool {
	ga, err1 := schema.ParseGroupVersion(a.APIVersion)
	gb, err2 := schema.ParseGroupVersion(b.APIVersion)
	return err1 == nil && err2 == nil && ga.Group == gb.Group && a.Kind == b.Kind && a.Name == b.Name
}

func upsert(object metav1.Object, ref metav1.OwnerReference) {
	refs := object.GetOwnerReferences()
	for i := range refs {
		if sameOwner(refs[i], ref) {
			refs[i] = ref
			object.SetOwnerReferences(refs)
			return
		}
	}
	object.SetOwnerReferences(append(refs, ref))
}
