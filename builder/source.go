package builder

import (
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/setpoint-dev/setpoint/controller"
	"github.com/setpoint-dev/setpoint/handler"
	"github.com/setpoint-dev/setpoint/informer"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/predicate"
)

// Source names a kind for For, Owns and Watches. Make one with Kind (a Go
// type resolved through the scheme and discovery) or KindAt (an explicit
// resource, for custom resources and *unstructured.Unstructured). Nothing
// is resolved until the builder's Complete.
type Source interface {
	// resolve binds the source to m's informer of its kind.
	resolve(m *manager.Manager) (resolved, error)
}

// resolved is a Source bound to an informer; it makes controller sources.
type resolved interface {
	mapping() manager.Mapping
	self(preds []predicate.Predicate) controller.Source
	owner(gk schema.GroupKind, namespaced bool, preds []predicate.Predicate) controller.Source
}

// TypedSource is the Source of Go type T. Its Map method turns it into a
// Watch with a mapping of your own.
type TypedSource[T informer.Object] struct {
	gvr        *schema.GroupVersionResource // nil: resolve through discovery
	namespaced bool
}

// Kind is the source of Go type T, e.g. Kind[*appsv1.Deployment](). T's
// kind comes from the manager's scheme and its resource from discovery.
func Kind[T informer.Object]() *TypedSource[T] { return &TypedSource[T]{} }

// KindAt is the source of T over an explicit resource, without discovery:
// for custom resources, for *unstructured.Unstructured, and for types the
// scheme does not know. namespaced says whether the resource lives in
// namespaces.
func KindAt[T informer.Object](gvr schema.GroupVersionResource, namespaced bool) *TypedSource[T] {
	return &TypedSource[T]{gvr: &gvr, namespaced: namespaced}
}

// Map returns a Watch that enqueues fn(obj) for every event of T.
func (s *TypedSource[T]) Map(fn handler.MapFunc[T]) Watch {
	return Watch{src: s, make: func(r resolved, preds []predicate.Predicate) controller.Source {
		b := r.(*boundSource[T])
		return controller.Kind(b.inf, b.mp.String(), fn, preds...)
	}}
}

func (s *TypedSource[T]) resolve(m *manager.Manager) (resolved, error) {
	if s.gvr != nil {
		inf := manager.InformerFor[T](m, *s.gvr, s.namespaced)
		mp := manager.Mapping{GVR: *s.gvr, Namespaced: s.namespaced}
		if gvk, err := m.KindFor(reflect.New(reflect.TypeFor[T]().Elem()).Interface().(T)); err == nil {
			mp.GVK = gvk // typed T known to the scheme: Owns can use the kind
		}
		return &boundSource[T]{inf: inf, mp: mp}, nil
	}
	inf, mp, err := manager.Informer[T](m)
	if err != nil {
		return nil, err
	}
	return &boundSource[T]{inf: inf, mp: mp}, nil
}

// boundSource is a TypedSource bound to the manager's informer of T.
type boundSource[T informer.Object] struct {
	inf *informer.Informer[T]
	mp  manager.Mapping
}

func (b *boundSource[T]) mapping() manager.Mapping { return b.mp }

func (b *boundSource[T]) self(preds []predicate.Predicate) controller.Source {
	return controller.Kind(b.inf, b.mp.String(), handler.Object[T](), preds...)
}

func (b *boundSource[T]) owner(gk schema.GroupKind, namespaced bool, preds []predicate.Predicate) controller.Source {
	return controller.Kind(b.inf, b.mp.String(), handler.ControllerOwner[T](gk, namespaced), preds...)
}

// Watch is a Source with a mapping, for Builder.Watches; make one with
// TypedSource.Map.
type Watch struct {
	src  Source
	make func(r resolved, preds []predicate.Predicate) controller.Source
}

func (w Watch) build(m *manager.Manager, preds []predicate.Predicate) (controller.Source, error) {
	if w.src == nil {
		return nil, fmt.Errorf("empty Watch: make one with builder.Kind[T]().Map(fn)")
	}
	r, err := w.src.resolve(m)
	if err != nil {
		return nil, err
	}
	return w.make(r, preds), nil
}
