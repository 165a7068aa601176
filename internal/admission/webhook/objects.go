package webhook

import (
	"encoding/json"
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// decodeLike decodes data into a new object of like's Go type.
func decodeLike(like runtime.Object, data []byte) (runtime.Object, error) {
	if _, ok := like.(*unstructured.Unstructured); ok {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(data); err != nil {
			return nil, err
		}
		return u, nil
	}
	t := reflect.TypeOf(like)
	if t.Kind() != reflect.Pointer {
		return nil, fmt.Errorf("unexpected object type %T", like)
	}
	obj, ok := reflect.New(t.Elem()).Interface().(runtime.Object)
	if !ok {
		return nil, fmt.Errorf("unexpected object type %T", like)
	}
	if err := json.Unmarshal(data, obj); err != nil {
		return nil, err
	}
	// In memory, typed objects carry no apiVersion and kind.
	if k := like.GetObjectKind().GroupVersionKind(); k.Empty() {
		obj.GetObjectKind().SetGroupVersionKind(k)
	}
	return obj, nil
}

// replace makes dst hold src's value (both of one Go type): admission
// changes the object of the write in place.
func replace(dst, src runtime.Object) {
	if u, ok := dst.(*unstructured.Unstructured); ok {
		u.Object = src.(*unstructured.Unstructured).Object
		return
	}
	reflect.ValueOf(dst).Elem().Set(reflect.ValueOf(src).Elem())
}
