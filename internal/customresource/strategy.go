package customresource

import (
	"fmt"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/crdschema"
)

var metadataPath = field.NewPath("metadata")

// strategy is the write logic of one served version of a custom resource.
type strategy struct {
	schema     *crdschema.Schema
	namespaced bool
	kind       schema.GroupVersionKind
	// status is true when the version has the status subresource: the main
	// resource then never changes status.
	status bool
}

func content(obj runtime.Object) map[string]any {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		panic(fmt.Sprintf("customresource: %T is not unstructured", obj)) // the registry serves only unstructured here
	}
	if u.Object == nil {
		u.Object = map[string]any{}
	}
	return u.Object
}

// PrepareForCreate drops status when it is a subresource.
func (s *strategy) PrepareForCreate(obj runtime.Object) {
	if s.status {
		delete(content(obj), "status")
	}
}

// PrepareForUpdate keeps old's status when it is a subresource.
func (s *strategy) PrepareForUpdate(obj, old runtime.Object) {
	if !s.status {
		return
	}
	o, prev := content(obj), content(old)
	if st, ok := prev["status"]; ok {
		o["status"] = runtime.DeepCopyJSONValue(st)
	} else {
		delete(o, "status")
	}
}

// Prune drops fields the schema does not know and returns their paths.
func (s *strategy) Prune(obj runtime.Object) []string { return s.schema.Prune(content(obj)) }

// Default applies the schema's defaults.
func (s *strategy) Default(obj runtime.Object) { s.schema.Default(content(obj)) }

// Validate checks metadata and the schema.
func (s *strategy) Validate(obj runtime.Object) field.ErrorList {
	m, errs := s.objectMeta(obj)
	if m != nil {
		errs = append(errs, apivalidation.ValidateObjectMeta(m, s.namespaced, apivalidation.NameIsDNSSubdomain, metadataPath)...)
	}
	return append(errs, s.validateContent(obj)...)
}

// ValidateUpdate checks metadata changes and the schema.
func (s *strategy) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	m, errs := s.objectMeta(obj)
	om, _ := s.objectMeta(old)
	if m != nil && om != nil {
		if m.ResourceVersion == "" {
			// An unconditional update: the server resolved it against old.
			m.ResourceVersion = om.ResourceVersion
		}
		errs = append(errs, apivalidation.ValidateObjectMetaUpdate(m, om, metadataPath)...)
	}
	return append(errs, s.validateContent(obj)...)
}

// objectMeta reads metadata as ObjectMeta; malformed metadata (a label
// that is not a string, say) is a field error.
func (s *strategy) objectMeta(obj runtime.Object) (*metav1.ObjectMeta, field.ErrorList) {
	raw, ok := content(obj)["metadata"].(map[string]any)
	if !ok {
		return nil, field.ErrorList{field.Required(metadataPath, "")}
	}
	m := &metav1.ObjectMeta{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, m); err != nil {
		return nil, field.ErrorList{field.Invalid(metadataPath, "", err.Error())}
	}
	return m, nil
}

// validateContent checks apiVersion/kind and everything the schema covers.
func (s *strategy) validateContent(obj runtime.Object) field.ErrorList {
	var errs field.ErrorList
	u := obj.(*unstructured.Unstructured)
	if gvk := u.GroupVersionKind(); gvk.Kind != "" && gvk.Kind != s.kind.Kind {
		errs = append(errs, field.Invalid(field.NewPath("kind"), gvk.Kind, "must be "+s.kind.Kind))
	}
	return append(errs, s.schema.Validate(u.Object)...)
}

// statusStrategy is the write logic of /status: only status changes.
type statusStrategy struct{ s *strategy }

// PrepareForUpdate keeps everything of old but status; metadata the status
// endpoint may not change (labels, annotations, finalizers, owners) is
// taken from old too.
func (st statusStrategy) PrepareForUpdate(obj, old runtime.Object) {
	o, prev := content(obj), content(old)
	status, hasStatus := o["status"]
	meta, _ := o["metadata"].(map[string]any)
	for k := range o {
		delete(o, k)
	}
	for k, v := range prev {
		o[k] = runtime.DeepCopyJSONValue(v)
	}
	if hasStatus {
		o["status"] = status
	} else {
		delete(o, "status")
	}
	if meta != nil {
		keep := o["metadata"].(map[string]any)
		for _, k := range []string{"resourceVersion", "managedFields"} {
			if v, ok := meta[k]; ok {
				keep[k] = v
			} else {
				delete(keep, k)
			}
		}
	}
}

// ValidateUpdate checks the new status against the schema.
func (st statusStrategy) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return st.s.ValidateUpdate(obj, old)
}
