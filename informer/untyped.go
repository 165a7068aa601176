package informer

import (
	"fmt"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/setpoint-dev/setpoint/cache"
	"github.com/setpoint-dev/setpoint/rest"
)

// Untyped is an informer's cache seen without its type parameter, for
// readers that know the Go type only at run time (package client). Like
// the typed cache, it hands out the cached objects themselves: shared,
// and (with CompactShare) sharing parts with each other. Never modify
// them; copy first.
type Untyped interface {
	HasSynced() bool
	LastError() error
	// GetByKey returns the object stored under "namespace/name" (or
	// "name").
	GetByKey(key string) (Object, bool, error)
	// List returns every cached object.
	List() []Object
	// ByIndex returns the objects whose index function gave value.
	ByIndex(indexName, value string) ([]Object, error)
	// AddIndexer installs an index; stored objects are filed in it at once.
	AddIndexer(name string, fn func(Object) ([]string, error)) error
	// IndexNames lists the installed indexes.
	IndexNames() []string
	// CheckMutations reports cached objects modified in place (see
	// cache.ThreadSafeIndexer.CheckMutations); nil when detection is off.
	CheckMutations() error
}

// Untyped returns the informer's cache without its type parameter.
func (i *Informer[T]) Untyped() Untyped { return untypedView[T]{i} }

type untypedView[T metav1.Object] struct{ i *Informer[T] }

func (v untypedView[T]) HasSynced() bool       { return v.i.HasSynced() }
func (v untypedView[T]) LastError() error      { return v.i.LastError() }
func (v untypedView[T]) IndexNames() []string  { return v.i.indexer.IndexNames() }
func (v untypedView[T]) CheckMutations() error { return v.i.indexer.CheckMutations() }

func (v untypedView[T]) GetByKey(key string) (Object, bool, error) {
	obj, ok, err := v.i.indexer.GetByKey(key)
	if !ok || err != nil {
		return nil, ok, err
	}
	return any(obj).(Object), true, nil
}

func (v untypedView[T]) List() []Object { return widen(v.i.indexer.List()) }

func (v untypedView[T]) ByIndex(indexName, value string) ([]Object, error) {
	objs, err := v.i.indexer.ByIndex(indexName, value)
	return widen(objs), err
}

func (v untypedView[T]) AddIndexer(name string, fn func(Object) ([]string, error)) error {
	return v.i.indexer.AddIndexers(cache.Indexers[T]{name: func(obj T) ([]string, error) { return fn(any(obj).(Object)) }})
}

func widen[T metav1.Object](objs []T) []Object {
	out := make([]Object, len(objs))
	for i, o := range objs {
		out[i] = any(o).(Object)
	}
	return out
}

// ForType returns the factory's informer of gvr whose objects have the Go
// type typ (a pointer to an API struct, *unstructured.Unstructured, or
// *metav1.PartialObjectMetadata), seen untyped. It returns the informer
// For or Dynamic built for the same arguments when there is one; else it
// builds one that decodes typ through the client's scheme, cached as
// Object, which later For calls do not share (they build their own). A new
// informer does not run until the next Start. newList must return a fresh
// list of typ's list type.
func ForType(f *Factory, typ reflect.Type, newList func() runtime.Object, gvr schema.GroupVersionResource, namespaced bool, opts ...Option) (Untyped, error) {
	if typ.Kind() != reflect.Pointer || typ.Elem().Kind() != reflect.Struct {
		return nil, fmt.Errorf("informer of %s: want a pointer to a struct", typ)
	}
	if typ == reflect.TypeFor[*unstructured.Unstructured]() {
		return Dynamic(f, gvr, namespaced, opts...).Untyped(), nil
	}
	key := f.key(typ, gvr, namespaced, opts)
	f.mu.Lock()
	defer f.mu.Unlock()
	if m, ok := f.informers[key]; ok {
		if u, ok := m.(interface{ Untyped() Untyped }); ok {
			return u.Untyped(), nil
		}
	}
	ekey := key
	ekey.untyped = true
	if m, ok := f.informers[ekey]; ok {
		return m.(*Informer[Object]).Untyped(), nil
	}
	newObj := func() Object { return reflect.New(typ.Elem()).Interface().(Object) }
	if _, ok := reflect.New(typ.Elem()).Interface().(Object); !ok {
		return nil, fmt.Errorf("informer of %s: not an API object (metav1.Object and runtime.Object)", typ)
	}
	res := rest.ForNew(f.client, gvr, namespaced, newObj, newList).PreferProtobuf().Namespace(key.namespace)
	if typ == reflect.TypeFor[*metav1.PartialObjectMetadata]() {
		res = res.MetadataOnly()
	}
	inf := New[Object, runtime.Object](res, informerOptions[Object](f.opts, ekey))
	f.informers[ekey] = inf
	return inf.Untyped(), nil
}
