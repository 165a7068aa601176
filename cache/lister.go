package cache

import (
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ListerSource is what a Lister reads: an indexer keyed by
// MetaNamespaceKeyFunc. NamespaceIndex, when installed, speeds up
// namespace-scoped lists; without it they scan everything.
type ListerSource[T any] interface {
	Reader[T]
	IndexReader[T]
}

// Lister answers typed, label-filtered reads over an indexer. Like the
// indexer, it hands out shared objects: do not modify them.
type Lister[T metav1.Object] struct {
	source   ListerSource[T]
	resource schema.GroupResource
}

// NewLister returns a lister over source whose NotFound errors name
// resource (for example {Group: "", Resource: "pods"}).
func NewLister[T metav1.Object](source ListerSource[T], resource schema.GroupResource) *Lister[T] {
	return &Lister[T]{source: source, resource: resource}
}

// List returns every object, in any namespace, whose labels match
// selector. A nil selector matches everything.
func (l *Lister[T]) List(selector labels.Selector) ([]T, error) {
	return filter(l.source.List(), selector), nil
}

// Get returns the cluster-scoped object called name, or a NotFound error.
func (l *Lister[T]) Get(name string) (T, error) {
	return l.get(name, name)
}

// Namespace narrows the lister to one namespace.
func (l *Lister[T]) Namespace(namespace string) NamespaceLister[T] {
	return NamespaceLister[T]{lister: l, namespace: namespace}
}

func (l *Lister[T]) get(key, name string) (T, error) {
	obj, exists, err := l.source.GetByKey(key)
	if err != nil {
		var zero T
		return zero, fmt.Errorf("cache: get %s %q: %w", l.resource, key, err)
	}
	if !exists {
		var zero T
		return zero, apierrors.NewNotFound(l.resource, name)
	}
	return obj, nil
}

// NamespaceLister reads one namespace.
type NamespaceLister[T metav1.Object] struct {
	lister    *Lister[T]
	namespace string
}

// List returns the namespace's objects whose labels match selector. A nil
// selector matches everything.
func (n NamespaceLister[T]) List(selector labels.Selector) ([]T, error) {
	objs, err := n.lister.source.ByIndex(NamespaceIndex, n.namespace)
	if err != nil {
		// No namespace index: scan.
		var all []T
		for _, obj := range n.lister.source.List() {
			if obj.GetNamespace() == n.namespace {
				all = append(all, obj)
			}
		}
		objs = all
	}
	return filter(objs, selector), nil
}

// Get returns the named object of the namespace, or a NotFound error
// (apierrors.IsNotFound) naming the lister's resource.
func (n NamespaceLister[T]) Get(name string) (T, error) {
	return n.lister.get(ObjectKey(n.namespace, name), name)
}

// filter keeps the objects whose labels match selector, reusing objs.
func filter[T metav1.Object](objs []T, selector labels.Selector) []T {
	if selector == nil || selector.Empty() {
		if objs == nil {
			return []T{}
		}
		return objs
	}
	out := objs[:0]
	for _, obj := range objs {
		if selector.Matches(labels.Set(obj.GetLabels())) {
			out = append(out, obj)
		}
	}
	return out
}
