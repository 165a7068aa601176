package strategy

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// metaObject is a typed API object: a runtime.Object with ObjectMeta.
type metaObject interface {
	runtime.Object
	metav1.Object
}

// Attrs builds the AttrFunc of a kind: the object's labels, plus
// metadata.name, metadata.namespace (namespaced kinds only) and whatever
// extra adds. The returned label set is the object's own map: callers must
// not modify it.
func Attrs[T metaObject](namespaced bool, extra func(obj T, set fields.Set)) registry.AttrFunc {
	return func(obj runtime.Object) (labels.Set, fields.Set, error) {
		o, ok := obj.(T)
		if !ok {
			var want T
			return nil, nil, fmt.Errorf("strategy: attrs of %T, want %T", obj, want)
		}
		set := fields.Set{"metadata.name": o.GetName()}
		if namespaced {
			set["metadata.namespace"] = o.GetNamespace()
		}
		if extra != nil {
			extra(o, set)
		}
		return labels.Set(o.GetLabels()), set, nil
	}
}

// UnknownFieldLabel is kube-apiserver's answer to a field selector on an
// unsupported field of a kind that has no field labels of its own
// (registry.Resource.FieldLabelError).
func UnknownFieldLabel(label string) string {
	return fmt.Sprintf("%q is not a known field selector: only %q, %q", label, "metadata.name", "metadata.namespace")
}

// UnknownFieldLabelOf returns the FieldLabelError of a kind that has field
// labels of its own in a group other than the core one (batch/v1 Job):
// "field label \"x\" not supported for Job".
func UnknownFieldLabelOf(kind string) func(string) string {
	return func(label string) string { return fmt.Sprintf("field label %q not supported for %s", label, kind) }
}

// FieldLabelsOf returns the FieldLabelError of kinds whose field label
// conversion names the kind ("field label not supported for
// resource.k8s.io/v1, Kind=ResourceSlice: spec.foo").
func FieldLabelsOf(gvk schema.GroupVersionKind) func(label string) string {
	return func(label string) string { return fmt.Sprintf("field label not supported for %s: %s", gvk, label) }
}

// NamespaceField is the extra field of a cluster-scoped kind that
// kube-apiserver selects on metadata only: its default field label
// conversion accepts metadata.namespace for every kind, which then matches
// the empty namespace only. Use as Attrs(false, NamespaceField[T]).
func NamespaceField[T metaObject](_ T, set fields.Set) { set["metadata.namespace"] = "" }
