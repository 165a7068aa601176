package handler

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/setpoint-dev/setpoint/reconcile"
)

// Object maps an object to a request for itself.
func Object[T metav1.Object]() MapFunc[T] {
	return func(obj T) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}}}
	}
}

// ControllerOwner maps an object to its controller (the ownerReference
// with controller=true) when that owner has the given group and kind, and
// to nothing otherwise. The owner's version is ignored. ownerNamespaced
// says whether the owner kind is namespaced: an owner lives in its
// dependent's namespace, or has none when it is cluster-scoped.
func ControllerOwner[T metav1.Object](owner schema.GroupKind, ownerNamespaced bool) MapFunc[T] {
	return owners[T](owner, ownerNamespaced, true)
}

// Owner is ControllerOwner for every owner of the given group and kind,
// controller or not.
func Owner[T metav1.Object](owner schema.GroupKind, ownerNamespaced bool) MapFunc[T] {
	return owners[T](owner, ownerNamespaced, false)
}

func owners[T metav1.Object](owner schema.GroupKind, ownerNamespaced, onlyController bool) MapFunc[T] {
	return func(obj T) []reconcile.Request {
		var out []reconcile.Request
		for _, ref := range obj.GetOwnerReferences() {
			if onlyController && (ref.Controller == nil || !*ref.Controller) {
				continue
			}
			gv, err := schema.ParseGroupVersion(ref.APIVersion)
			if err != nil || gv.Group != owner.Group || ref.Kind != owner.Kind {
				continue
			}
			ns := ""
			if ownerNamespaced {
				ns = obj.GetNamespace()
			}
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: ref.Name}})
		}
		return out
	}
}
