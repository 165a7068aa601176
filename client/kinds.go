package client

import (
	"fmt"
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GVKForObject returns the kind of obj: from its apiVersion and kind for
// unstructured and metadata-only objects (and their lists), from s for
// typed ones.
func GVKForObject(obj runtime.Object, s *runtime.Scheme) (schema.GroupVersionKind, error) {
	switch obj.(type) {
	case *unstructured.Unstructured, *unstructured.UnstructuredList,
		*metav1.PartialObjectMetadata, *metav1.PartialObjectMetadataList:
		gvk := obj.GetObjectKind().GroupVersionKind()
		if gvk.Kind == "" || gvk.Version == "" {
			return gvk, fmt.Errorf("%T without apiVersion and kind: set them to name the kind", obj)
		}
		return gvk, nil
	}
	kinds, _, err := s.ObjectKinds(obj)
	if err != nil {
		return schema.GroupVersionKind{}, fmt.Errorf("kind of %T: %w (add the type to the scheme with its AddToScheme)", obj, err)
	}
	if len(kinds) > 1 {
		// A type registered in several versions: prefer the object's own.
		if own := obj.GetObjectKind().GroupVersionKind(); !own.Empty() {
			for _, k := range kinds {
				if k == own {
					return k, nil
				}
			}
		}
	}
	return kinds[0], nil
}

// itemKind is the kind of the items of a list of kind gvk.
func itemKind(gvk schema.GroupVersionKind) (schema.GroupVersionKind, error) {
	if !strings.HasSuffix(gvk.Kind, "List") || len(gvk.Kind) == len("List") {
		return gvk, fmt.Errorf("%s is not a list kind", gvk)
	}
	gvk.Kind = strings.TrimSuffix(gvk.Kind, "List")
	return gvk, nil
}

// itemType returns the Go type of the items of list (a pointer type) and
// their kind.
func itemType(list ObjectList, s *runtime.Scheme) (reflect.Type, schema.GroupVersionKind, error) {
	lgvk, err := GVKForObject(list, s)
	if err != nil {
		return nil, lgvk, err
	}
	gvk, err := itemKind(lgvk)
	if err != nil {
		return nil, gvk, err
	}
	switch list.(type) {
	case *unstructured.UnstructuredList:
		return reflect.TypeFor[*unstructured.Unstructured](), gvk, nil
	case *metav1.PartialObjectMetadataList:
		return reflect.TypeFor[*metav1.PartialObjectMetadata](), gvk, nil
	}
	obj, err := s.New(gvk)
	if err != nil {
		return nil, gvk, fmt.Errorf("item type of %T: %w", list, err)
	}
	return reflect.TypeOf(obj), gvk, nil
}

// newListOf returns a func making fresh lists of list's type, with the
// apiVersion and kind of unstructured lists kept.
func newListOf(list runtime.Object) func() runtime.Object {
	t := reflect.TypeOf(list).Elem()
	gvk := list.GetObjectKind().GroupVersionKind()
	return func() runtime.Object {
		l := reflect.New(t).Interface().(runtime.Object)
		if _, ok := l.(*unstructured.UnstructuredList); ok {
			l.GetObjectKind().SetGroupVersionKind(gvk)
		}
		return l
	}
}

// listTypeFor returns a func making fresh lists for items of Go type typ
// and kind gvk.
func listTypeFor(typ reflect.Type, gvk schema.GroupVersionKind, s *runtime.Scheme) (func() runtime.Object, error) {
	lgvk := gvk.GroupVersion().WithKind(gvk.Kind + "List")
	switch typ {
	case reflect.TypeFor[*unstructured.Unstructured]():
		return newListOf(&unstructured.UnstructuredList{Object: map[string]any{"apiVersion": lgvk.GroupVersion().String(), "kind": lgvk.Kind}}), nil
	case reflect.TypeFor[*metav1.PartialObjectMetadata]():
		return func() runtime.Object { return &metav1.PartialObjectMetadataList{} }, nil
	}
	l, err := s.New(lgvk)
	if err != nil {
		return nil, fmt.Errorf("list type of %s: %w", gvk, err)
	}
	return newListOf(l), nil
}

// newLike returns a fresh object of obj's Go type (unstructured and
// metadata-only objects keep their apiVersion and kind).
func newLike(obj runtime.Object) runtime.Object {
	out := reflect.New(reflect.TypeOf(obj).Elem()).Interface().(runtime.Object)
	switch obj.(type) {
	case *unstructured.Unstructured, *metav1.PartialObjectMetadata:
		out.GetObjectKind().SetGroupVersionKind(obj.GetObjectKind().GroupVersionKind())
	}
	return out
}

// assign makes dst (a pointer) hold what src (a pointer of the same type)
// points to.
func assign(dst, src runtime.Object) error {
	dv, sv := reflect.ValueOf(dst), reflect.ValueOf(src)
	if dv.Type() != sv.Type() {
		return fmt.Errorf("cannot fill a %T with a %T", dst, src)
	}
	dv.Elem().Set(sv.Elem())
	return nil
}

// setList fills list with objs.
func setList(list ObjectList, objs []runtime.Object) error {
	if err := meta.SetList(list, objs); err != nil {
		return fmt.Errorf("fill %T: %w", list, err)
	}
	return nil
}

// isMetadataOnly tells whether obj is a metadata-only object.
func isMetadataOnly(obj runtime.Object) bool {
	_, ok := obj.(*metav1.PartialObjectMetadata)
	return ok
}
