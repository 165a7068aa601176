package fake

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
)

// typeConverters tries its converters in order and uses the first that
// can type an object (a deduced converter, which types anything, belongs
// last).
type typeConverters []managedfields.TypeConverter

func (tcs typeConverters) ObjectToTyped(obj runtime.Object, opts ...typed.ValidationOptions) (*typed.TypedValue, error) {
	var errs []error
	for _, tc := range tcs {
		v, err := tc.ObjectToTyped(obj, opts...)
		if err == nil {
			return v, nil
		}
		errs = append(errs, err)
	}
	return nil, fmt.Errorf("fake: no type converter types %s: %v", obj.GetObjectKind().GroupVersionKind(), errs)
}

func (tcs typeConverters) TypedToObject(v *typed.TypedValue) (runtime.Object, error) {
	var errs []error
	for _, tc := range tcs {
		obj, err := tc.TypedToObject(v)
		if err == nil {
			return obj, nil
		}
		errs = append(errs, err)
	}
	return nil, fmt.Errorf("fake: no type converter converts the typed value back: %v", errs)
}

// The field managers work on unstructured objects: the tracker stores
// content, and every object of a kind has the one version it is stored in.
type unstructuredConvertor struct{}

func (unstructuredConvertor) Convert(in, out, _ any) error {
	src, ok := in.(*unstructured.Unstructured)
	dst, ok2 := out.(*unstructured.Unstructured)
	if !ok || !ok2 {
		return fmt.Errorf("fake: convert %T to %T: unstructured only", in, out)
	}
	dst.Object = runtime.DeepCopyJSON(src.Object)
	return nil
}

func (unstructuredConvertor) ConvertToVersion(in runtime.Object, gv runtime.GroupVersioner) (runtime.Object, error) {
	u, ok := in.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("fake: convert %T: unstructured only", in)
	}
	target, ok := gv.KindForGroupVersionKinds([]schema.GroupVersionKind{u.GroupVersionKind()})
	if !ok || target.GroupVersion() != u.GroupVersionKind().GroupVersion() {
		return nil, fmt.Errorf("fake: %s is kept in one version; no conversion to %v", u.GroupVersionKind(), gv)
	}
	return u.DeepCopy(), nil
}

func (unstructuredConvertor) ConvertFieldLabel(_ schema.GroupVersionKind, label, value string) (string, string, error) {
	return label, value, nil
}

type unstructuredCreater struct{}

func (unstructuredCreater) New(gvk schema.GroupVersionKind) (runtime.Object, error) {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetGroupVersionKind(gvk)
	return u, nil
}

type noDefaults struct{}

func (noDefaults) Default(runtime.Object) {}

// managerKey names one field manager: a kind, written through the main
// resource ("") or a subresource.
type managerKey struct {
	gvk schema.GroupVersionKind
	sub string
}

// fieldManager returns the field manager of gvk's endpoint sub, built on
// first use. The caller holds f.mu. As on the server, a kind with a status
// subresource does not track status through the main resource, and its
// status endpoint does not track spec nor the metadata it does not write.
func (f *fakeClient) fieldManager(gvk schema.GroupVersionKind, sub string) (*managedfields.FieldManager, error) {
	k := managerKey{gvk, sub}
	if fm, ok := f.managers[k]; ok {
		return fm, nil
	}
	var reset *fieldpath.Set
	switch {
	case sub == "status":
		reset = fieldpath.NewSet(
			fieldpath.MakePathOrDie("spec"),
			fieldpath.MakePathOrDie("metadata", "labels"),
			fieldpath.MakePathOrDie("metadata", "annotations"),
			fieldpath.MakePathOrDie("metadata", "finalizers"),
			fieldpath.MakePathOrDie("metadata", "ownerReferences"),
		)
	case f.status[gvk.GroupKind()]:
		reset = fieldpath.NewSet(fieldpath.MakePathOrDie("status"))
	}
	var filters map[fieldpath.APIVersion]fieldpath.Filter
	if reset != nil {
		filters = map[fieldpath.APIVersion]fieldpath.Filter{
			fieldpath.APIVersion(gvk.GroupVersion().String()): fieldpath.NewExcludeSetFilter(reset)}
	}
	fm, err := managedfields.NewDefaultFieldManager(f.typeConverter, unstructuredConvertor{}, noDefaults{},
		unstructuredCreater{}, gvk, gvk.GroupVersion(), sub, filters)
	if err != nil {
		return nil, fmt.Errorf("fake: field manager of %s: %w", gvk, err)
	}
	f.managers[k] = fm
	return fm, nil
}

// trackUpdate records in next manager's Update entry for a write over old
// (nil on create) through sub. As on the server, a write whose fields
// cannot be typed is stored without a new entry.
func (f *fakeClient) trackUpdate(gvk schema.GroupVersionKind, sub string, old, next map[string]any, manager string) map[string]any {
	fm, err := f.fieldManager(gvk, sub)
	if err != nil {
		return next
	}
	live := &unstructured.Unstructured{Object: old}
	if old == nil {
		live = &unstructured.Unstructured{Object: map[string]any{}}
	}
	live.SetGroupVersionKind(gvk)
	nu := &unstructured.Unstructured{Object: next}
	nu.SetGroupVersionKind(gvk)
	out, err := fm.Update(live, nu, manager)
	if err != nil {
		return next
	}
	return out.(*unstructured.Unstructured).Object
}
