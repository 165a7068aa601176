package predicate

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// CreateEvent is an object that appeared.
type CreateEvent struct {
	Object metav1.Object
	// IsInInitialList is true when the object came from the informer's
	// first list (or was replayed to a handler added late).
	IsInInitialList bool
}

// UpdateEvent is an object that changed. For a resync ObjectOld and
// ObjectNew are the same object.
type UpdateEvent struct {
	ObjectOld, ObjectNew metav1.Object
}

// DeleteEvent is an object that went away.
type DeleteEvent struct {
	// Object is the last state known: the deleted object or, when
	// DeleteStateUnknown, the cache's last copy.
	Object             metav1.Object
	DeleteStateUnknown bool
}

// Predicate decides whether an event should reach the queue. Each method
// returns true to let the event through.
type Predicate interface {
	Create(CreateEvent) bool
	Update(UpdateEvent) bool
	Delete(DeleteEvent) bool
}

// Funcs is a Predicate made of functions; a nil function lets every event
// of its kind through.
type Funcs struct {
	CreateFunc func(CreateEvent) bool
	UpdateFunc func(UpdateEvent) bool
	DeleteFunc func(DeleteEvent) bool
}

// Create implements Predicate.
func (f Funcs) Create(e CreateEvent) bool { return f.CreateFunc == nil || f.CreateFunc(e) }

// Update implements Predicate.
func (f Funcs) Update(e UpdateEvent) bool { return f.UpdateFunc == nil || f.UpdateFunc(e) }

// Delete implements Predicate.
func (f Funcs) Delete(e DeleteEvent) bool { return f.DeleteFunc == nil || f.DeleteFunc(e) }

// NewFilter returns a predicate applying keep to the object of every
// event: the object of a create or delete, the new object of an update.
func NewFilter(keep func(metav1.Object) bool) Predicate {
	return Funcs{
		CreateFunc: func(e CreateEvent) bool { return keep(e.Object) },
		UpdateFunc: func(e UpdateEvent) bool { return keep(e.ObjectNew) },
		DeleteFunc: func(e DeleteEvent) bool { return keep(e.Object) },
	}
}

// Typed is NewFilter for objects of Go type T; an object of another type
// is dropped. Example:
//
//	predicate.Typed(func(d *appsv1.Deployment) bool { return d.Spec.Paused })
func Typed[T metav1.Object](keep func(T) bool) Predicate {
	return NewFilter(func(o metav1.Object) bool {
		t, ok := o.(T)
		return ok && keep(t)
	})
}

// Labels lets through events whose object matches sel (the new object of
// an update). It panics on nothing; an invalid selector is the caller's
// error from metav1.LabelSelectorAsSelector or labels.Parse.
func Labels(sel labels.Selector) Predicate {
	return NewFilter(func(o metav1.Object) bool { return sel.Matches(labels.Set(o.GetLabels())) })
}

// LabelSelector is Labels for a metav1.LabelSelector; it fails when the
// selector is invalid.
func LabelSelector(ls *metav1.LabelSelector) (Predicate, error) {
	sel, err := metav1.LabelSelectorAsSelector(ls)
	if err != nil {
		return nil, err
	}
	return Labels(sel), nil
}
