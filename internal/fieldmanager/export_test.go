package fieldmanager

import "k8s.io/apimachinery/pkg/runtime"

// UpdateUnreduced is Update tracking the whole objects, as before reduced
// existed: the reference its answers are compared with.
func (r *Resource) UpdateUnreduced(live, obj runtime.Object, manager, subresource string) runtime.Object {
	fm, err := r.manager(subresource)
	if err != nil {
		return obj
	}
	if live == nil {
		live = r.empty()
	}
	obj.GetObjectKind().SetGroupVersionKind(r.gvk)
	if out, err := fm.Update(live, obj, manager); err == nil {
		return out
	}
	setManagedFields(obj, live)
	return obj
}

// Reduced reports whether Update tracks reduced copies of live and obj.
func (r *Resource) Reduced(live, obj runtime.Object) bool {
	_, _, ok := r.reduced(live, obj)
	return ok
}
