package crconversion

import (
	"fmt"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// restoreObjectMeta replaces conv's metadata with a copy of orig's, but
// for the labels and annotations conv carries, which are validated when
// they changed: a webhook may change those and nothing else.
func restoreObjectMeta(orig, conv *unstructured.Unstructured) error {
	raw, found := conv.Object["metadata"]
	if !found {
		return fmt.Errorf("missing metadata in converted object")
	}
	answered, ok := raw.(map[string]any)
	if !ok {
		return fmt.Errorf("invalid metadata of type %T in converted object", raw)
	}
	restored := map[string]any{}
	if m, ok := orig.Object["metadata"]; ok {
		r, ok := runtime.DeepCopyJSONValue(m).(map[string]any)
		if !ok {
			return fmt.Errorf("invalid metadata of type %T in input object", m)
		}
		restored = r
	}
	conv.Object["metadata"] = restored
	for _, fld := range []string{"labels", "annotations"} {
		if err := takeStringMap(restored, answered, fld); err != nil {
			return err
		}
	}
	return nil
}

// takeStringMap sets restored[fld] to answered[fld], validating it when it
// differs from the original.
func takeStringMap(restored, answered map[string]any, fld string) error {
	v, found := answered[fld]
	if !found || v == nil {
		delete(restored, fld)
		return nil
	}
	got, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("invalid metadata.%s of type %T in converted object", fld, v)
	}
	was, ok := restored[fld].(map[string]any)
	if !ok && restored[fld] != nil {
		return fmt.Errorf("invalid metadata.%s of type %T in original object", fld, restored[fld])
	}
	changed := len(was) != len(got)
	strs := make(map[string]string, len(got))
	for k, val := range got {
		s, ok := val.(string)
		if !ok {
			return fmt.Errorf("metadata.%s[%s] must be a string, but is %T in converted object", fld, k, val)
		}
		if w, ok := was[k].(string); !ok || w != s {
			changed = true
		}
		strs[k] = s
	}
	if changed {
		var errs field.ErrorList
		if fld == "labels" {
			errs = metav1validation.ValidateLabels(strs, field.NewPath("metadata", "labels"))
		} else {
			// Kubernetes names the path metadata.annotation here.
			errs = apivalidation.ValidateAnnotations(strs, field.NewPath("metadata", "annotation"))
		}
		if len(errs) > 0 {
			return errs.ToAggregate()
		}
	}
	restored[fld] = got
	return nil
}
