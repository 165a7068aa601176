package predicate

import (
	"maps"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// updateOnly lets creates and deletes through and decides updates with
// changed; updates whose objects are missing pass, since nothing can be
// compared.
func updateOnly(changed func(old, new metav1.Object) bool) Predicate {
	return Funcs{UpdateFunc: func(e UpdateEvent) bool {
		if e.ObjectOld == nil || e.ObjectNew == nil {
			return true
		}
		return changed(e.ObjectOld, e.ObjectNew)
	}}
}

// GenerationChanged drops updates that leave metadata.generation
// unchanged: status-only and metadata-only writes, and resyncs. Creates
// and deletes pass. Note that for kinds without a generation-bumping spec
// (ConfigMap, Secret) the server never increments generation, so this
// predicate drops every update of them.
func GenerationChanged() Predicate {
	return updateOnly(func(o, n metav1.Object) bool { return o.GetGeneration() != n.GetGeneration() })
}

// LabelChanged drops updates that leave the labels unchanged.
func LabelChanged() Predicate {
	return updateOnly(func(o, n metav1.Object) bool { return !maps.Equal(o.GetLabels(), n.GetLabels()) })
}

// AnnotationChanged drops updates that leave the annotations unchanged.
func AnnotationChanged() Predicate {
	return updateOnly(func(o, n metav1.Object) bool {
		return !maps.Equal(o.GetAnnotations(), n.GetAnnotations())
	})
}

// ResourceVersionChanged drops updates whose resourceVersion did not
// change, which are exactly the resyncs.
func ResourceVersionChanged() Predicate {
	return updateOnly(func(o, n metav1.Object) bool { return o.GetResourceVersion() != n.GetResourceVersion() })
}
