package fake

import (
	"encoding/json"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/setpoint-dev/setpoint/client"
)

// apply serves a server-side apply of obj (the apply configuration)
// through sub ("" or "status"), as the API server does: the configuration
// is merged into the stored object (or creates it) for the manager named
// by the FieldOwner option, which owns the fields it applied from then on;
// fields another manager owns with another value are a 409 Conflict whose
// causes name the field and the manager, unless ForceOwnership takes them.
func (f *fakeClient) apply(obj client.Object, sub string, patch client.Patch, po client.PatchOptions) error {
	gvk, err := client.GVKForObject(obj, f.scheme)
	if err != nil {
		return err
	}
	raw := po.Raw
	if errs := metavalidation.ValidatePatchOptions(&raw, types.ApplyPatchType); len(errs) > 0 {
		return apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "PatchOptions"}, "", errs)
	}
	src := obj
	if obj.GetObjectKind().GroupVersionKind().Empty() {
		src = obj.DeepCopyObject().(client.Object)
		src.GetObjectKind().SetGroupVersionKind(gvk)
	}
	data, err := patch.Data(src)
	if err != nil {
		return err
	}
	cfg := &unstructured.Unstructured{Object: map[string]any{}}
	if err := json.Unmarshal(data, &cfg.Object); err != nil {
		return apierrors.NewBadRequest(fmt.Sprintf("error decoding YAML: %v", err))
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if sub == "status" && !f.status[gvk.GroupKind()] {
		return apierrors.NewNotFound(f.gr(gvk), obj.GetName())
	}
	k := f.key(gvk, obj.GetNamespace(), obj.GetName())
	old, exists := f.objects[gvk][k]
	if !exists && sub != "" {
		return apierrors.NewNotFound(f.gr(gvk), obj.GetName())
	}
	if rv := cfg.GetResourceVersion(); rv != "" && (!exists || rv != (&unstructured.Unstructured{Object: old}).GetResourceVersion()) {
		return apierrors.NewConflict(f.gr(gvk), obj.GetName(),
			fmt.Errorf("the object has been modified; please apply your changes to the latest version and try again"))
	}
	live := &unstructured.Unstructured{Object: map[string]any{}}
	if exists {
		live.Object = old
	}
	live.SetGroupVersionKind(gvk)
	fm, err := f.fieldManager(gvk, sub)
	if err != nil {
		return err
	}
	force := raw.Force != nil && *raw.Force
	out, err := fm.Apply(live, cfg, raw.FieldManager, force)
	if err != nil {
		var status apierrors.APIStatus
		if errors.As(err, &status) {
			return err
		}
		return apierrors.NewBadRequest(err.Error())
	}
	next := out.(*unstructured.Unstructured).Object
	if exists {
		next = f.splitStatus(gvk, sub, old, next, next)
	}
	nu := &unstructured.Unstructured{Object: next}
	if !exists {
		nu.SetNamespace(k.Namespace)
		nu.SetName(k.Name)
	}
	if raw.DryRun != nil {
		return fromMap(next, gvk, obj)
	}
	if !exists {
		old = nil
	}
	return f.commit(gvk, k, old, next, sub, obj)
}
