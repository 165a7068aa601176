package fieldmanager

import (
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Tracking an update converts the live and the new object to typed values
// and compares them, field by field: for a status write that is the whole
// pod twice, though its spec cannot differ. reduced drops from both the
// top-level fields (spec, status, data…; never apiVersion, kind or
// metadata) whose values are identical, so that tracking walks only what
// may have changed. The field sets come out the same: an identical
// subtree adds nothing to the comparison (a comparison of two absent
// fields is empty too), and the other steps of the update (the managers'
// schema reconciliation, the reset filters) read the schema and the field
// sets, not the values.
//
// It applies only when no conversion can see the dropped fields: typed
// objects (not custom resources), and every managedFields entry of live and
// obj in the resource's own version (an entry of another version is
// compared after converting both objects, and a conversion may compute a
// field from several).

// reduced returns shallow copies of live and obj without the top-level
// fields they share, and whether anything was dropped (if not, the caller
// tracks the objects themselves). The copies share everything but their
// top-level struct with the originals; tracking only replaces the copy's
// managedFields.
func (r *Resource) reduced(live, obj runtime.Object) (runtime.Object, runtime.Object, bool) {
	if r.res.Unstructured {
		return nil, nil, false
	}
	lv, ov := reflect.ValueOf(live), reflect.ValueOf(obj)
	if lv.Kind() != reflect.Pointer || lv.Type() != ov.Type() || lv.IsNil() || ov.IsNil() || lv.Elem().Kind() != reflect.Struct {
		return nil, nil, false
	}
	if !r.ownVersionOnly(live) || !r.ownVersionOnly(obj) {
		return nil, nil, false
	}
	t := lv.Elem().Type()
	var lc, oc reflect.Value
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() || f.Anonymous || f.Type == objectMetaType {
			continue // TypeMeta, ObjectMeta: kept
		}
		a, b := lv.Elem().Field(i), ov.Elem().Field(i)
		if a.IsZero() || !reflect.DeepEqual(a.Interface(), b.Interface()) {
			continue
		}
		if !lc.IsValid() {
			lc, oc = reflect.New(t), reflect.New(t)
			lc.Elem().Set(lv.Elem())
			oc.Elem().Set(ov.Elem())
		}
		lc.Elem().Field(i).SetZero()
		oc.Elem().Field(i).SetZero()
	}
	if !lc.IsValid() {
		return nil, nil, false
	}
	return lc.Interface().(runtime.Object), oc.Interface().(runtime.Object), true
}

var objectMetaType = reflect.TypeFor[metav1.ObjectMeta]()

// ownVersionOnly reports whether every managedFields entry of obj is of
// the resource's own apiVersion.
func (r *Resource) ownVersionOnly(obj runtime.Object) bool {
	m, ok := obj.(metav1.Object)
	if !ok {
		return false
	}
	version := r.gvk.GroupVersion().String()
	for _, e := range m.GetManagedFields() {
		if e.APIVersion != version {
			return false
		}
	}
	return true
}
