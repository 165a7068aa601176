package fieldmanager

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// unstructuredConvertor converts custom resources between the versions of
// one kind the way a CRD with conversion strategy None does: the content
// stays, apiVersion changes.
type unstructuredConvertor struct{}

func (unstructuredConvertor) Convert(in, out, _ any) error {
	u, ok1 := in.(*unstructured.Unstructured)
	o, ok2 := out.(*unstructured.Unstructured)
	if !ok1 || !ok2 {
		return fmt.Errorf("fieldmanager: cannot convert %T to %T", in, out)
	}
	gvk := o.GroupVersionKind()
	o.Object = runtime.DeepCopyJSON(u.Object)
	if !gvk.Empty() {
		o.SetGroupVersionKind(gvk)
	}
	return nil
}

func (unstructuredConvertor) ConvertToVersion(in runtime.Object, target runtime.GroupVersioner) (runtime.Object, error) {
	u, ok := in.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("fieldmanager: cannot convert %T", in)
	}
	gvk, ok := target.KindForGroupVersionKinds([]schema.GroupVersionKind{u.GroupVersionKind()})
	if !ok {
		return nil, fmt.Errorf("fieldmanager: %v has no version in %v", u.GroupVersionKind(), target)
	}
	out := u.DeepCopy()
	out.SetGroupVersionKind(gvk)
	return out, nil
}

func (unstructuredConvertor) ConvertFieldLabel(_ schema.GroupVersionKind, label, value string) (string, string, error) {
	return label, value, nil
}

// unstructuredCreater makes empty custom resources.
type unstructuredCreater struct{}

func (unstructuredCreater) New(gvk schema.GroupVersionKind) (runtime.Object, error) {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetGroupVersionKind(gvk)
	return u, nil
}
