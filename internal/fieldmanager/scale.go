package fieldmanager

import (
	"fmt"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// A write through the scale subresource is tracked as kube-apiserver
// tracks it: the object's entries are converted to the Scale's (those that
// own the replicas, at autoscaling/v1 spec.replicas), the Scale's own
// field manager records the writer's Update entry on them with
// subresource "scale", and the result is converted back: the writer's
// entry owns the object's replicas path, taken from the managers that
// owned it (apimachinery's ScaleHandler does both conversions).

var scaleGVK = autoscalingv1.SchemeGroupVersion.WithKind("Scale")

// newScaleManager builds the field manager of the Scale objects of res's
// scale subresource.
func newScaleManager(tc TypeConverter, scheme *runtime.Scheme) (*managedfields.FieldManager, error) {
	fm, err := managedfields.NewDefaultFieldManager(tc, scheme, runtime.ObjectDefaulter(scheme), scheme,
		scaleGVK, scaleGVK.GroupVersion(), "scale", nil)
	if err != nil {
		return nil, fmt.Errorf("fieldmanager: %s: %w", scaleGVK, err)
	}
	return fm, nil
}

// replicasPaths maps each group/version of res to its spec replicas path
// (nil for a version without the scale subresource).
func replicasPaths(res *registry.Resource) managedfields.ResourcePathMappings {
	paths := map[string][]string{res.GVK().GroupVersion().String(): {"spec", "replicas"}}
	if p, ok := res.Scale.(registry.ScaleReplicasPaths); ok {
		paths = p.SpecReplicasPaths()
	}
	out := managedfields.ResourcePathMappings{}
	for gv, path := range paths {
		if path == nil {
			out[gv] = nil
			continue
		}
		elems := make([]any, len(path))
		for i, s := range path {
			elems[i] = s
		}
		out[gv] = fieldpath.MakePathOrDie(elems...)
	}
	return out
}

// UpdateScale records in obj's managedFields manager's Update of the
// object's replicas through the scale subresource: oldScale and newScale
// are the Scale views of live and of the request. obj is modified and
// returned; if tracking fails, obj keeps live's entries, as Kubernetes
// does.
func (r *Resource) UpdateScale(live, obj runtime.Object, oldScale, newScale *autoscalingv1.Scale, manager string) runtime.Object {
	if r == nil || r.scale == nil {
		return obj
	}
	lm, lerr := meta.Accessor(live)
	om, oerr := meta.Accessor(obj)
	if lerr != nil || oerr != nil {
		return obj
	}
	om.SetManagedFields(lm.GetManagedFields())
	h := managedfields.NewScaleHandler(lm.GetManagedFields(), r.gvk.GroupVersion(), r.replicasPaths)
	entries, err := h.ToSubresource()
	if err != nil {
		return obj
	}
	oldScale, newScale = oldScale.DeepCopy(), newScale.DeepCopy()
	oldScale.ManagedFields, newScale.ManagedFields = entries, entries
	oldScale.SetGroupVersionKind(scaleGVK)
	newScale.SetGroupVersionKind(scaleGVK)
	out, err := r.scale.Update(oldScale, newScale, manager)
	if err != nil {
		return obj
	}
	tracked, err := meta.Accessor(out)
	if err != nil {
		return obj
	}
	parent, err := h.ToParent(tracked.GetManagedFields())
	if err != nil {
		return obj
	}
	om.SetManagedFields(parent)
	return obj
}
