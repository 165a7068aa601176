package controllerref

import (
	"errors"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/cache"
)

// ControllerUIDIndex is the name of the index that files an object under
// the UID of its controller, or under OrphanKey(namespace) when it has
// none. With it, a controller finds its dependents and the orphans it may
// adopt without scanning its namespace.
const ControllerUIDIndex = "controllerref.controller-uid"

// OrphanKey is the ControllerUIDIndex value of objects without a
// controller in namespace ns. It cannot collide with a UID.
func OrphanKey(ns string) string { return "orphan/" + ns }

// controllerUIDIndexFunc is the index function of ControllerUIDIndex.
func controllerUIDIndexFunc[T metav1.Object](obj T) ([]string, error) {
	if ref := metav1.GetControllerOfNoCopy(obj); ref != nil {
		return []string{string(ref.UID)}, nil
	}
	return []string{OrphanKey(obj.GetNamespace())}, nil
}

// AddControllerUIDIndex installs ControllerUIDIndex on idx unless it is
// there already; several controllers sharing one informer may all call it.
func AddControllerUIDIndex[T metav1.Object](idx *cache.ThreadSafeIndexer[T]) error {
	if slices.Contains(idx.IndexNames(), ControllerUIDIndex) {
		return nil
	}
	err := idx.AddIndexers(cache.Indexers[T]{ControllerUIDIndex: controllerUIDIndexFunc[T]})
	if err != nil && slices.Contains(idx.IndexNames(), ControllerUIDIndex) {
		return nil // another controller won the race
	}
	if err != nil {
		return errors.Join(errors.New("controllerref: add controller UID index"), err)
	}
	return nil
}

// Candidates returns the objects of idx controlled by owner plus the
// orphans in owner's namespace: everything Claim may keep or adopt.
// The objects are the cache's: do not modify them.
func Candidates[T metav1.Object](idx *cache.ThreadSafeIndexer[T], owner metav1.Object) ([]T, error) {
	owned, err := idx.ByIndex(ControllerUIDIndex, string(owner.GetUID()))
	if err != nil {
		return nil, err
	}
	orphans, err := idx.ByIndex(ControllerUIDIndex, OrphanKey(owner.GetNamespace()))
	if err != nil {
		return nil, err
	}
	return append(owned, orphans...), nil
}
