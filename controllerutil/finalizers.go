package controllerutil

import (
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AddFinalizer adds finalizer to o unless present; it reports whether it
// changed o.
func AddFinalizer(o metav1.Object, finalizer string) bool {
	if ContainsFinalizer(o, finalizer) {
		return false
	}
	o.SetFinalizers(append(o.GetFinalizers(), finalizer))
	return true
}

// RemoveFinalizer removes every occurrence of finalizer from o; it reports
// whether it changed o.
func RemoveFinalizer(o metav1.Object, finalizer string) bool {
	f := o.GetFinalizers()
	kept := slices.DeleteFunc(slices.Clone(f), func(s string) bool { return s == finalizer })
	if len(kept) == len(f) {
		return false
	}
	o.SetFinalizers(kept)
	return true
}

// ContainsFinalizer reports whether o carries finalizer.
func ContainsFinalizer(o metav1.Object, finalizer string) bool {
	return slices.Contains(o.GetFinalizers(), finalizer)
}

// SetCondition sets c in conditions (see meta.SetStatusCondition: the
// transition time changes only when the status does) with
// ObservedGeneration set to o's generation. It reports whether conditions
// changed.
func SetCondition(o metav1.Object, conditions *[]metav1.Condition, c metav1.Condition) bool {
	c.ObservedGeneration = o.GetGeneration()
	return meta.SetStatusCondition(conditions, c)
}
