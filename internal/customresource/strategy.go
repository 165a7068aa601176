package customresource

import (
	"context"
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

// PrepareForCreate drops status when it is a subresource; the schema's
// default status, if any, takes its place (Kubernetes applies it when it
// reads the object back from storage).
func (s *strategy) PrepareForCreate(obj runtime.Object) {
	if s.status {
		delete(content(obj), "status")
		s.schema.DefaultStatus(content(obj))
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
		s.schema.DefaultStatus(o)
	}
}

// Prune drops fields the schema does not know and returns their paths.
func (s *strategy) Prune(obj runtime.Object) []string { return s.schema.Prune(content(obj)) }

// Default applies the schema's defaults.
func (s *strategy) Default(obj runtime.Object) { s.schema.Default(content(obj)) }

// DefaultStored applies the schema's defaults to an object read from
// storage (registry.StoredDefaulter), as Kubernetes defaults custom
// objects on every read: a default added to the schema after an object
// was stored shows on the object from then on.
func (s *strategy) DefaultStored(obj runtime.Object) { s.schema.Default(content(obj)) }

// Validate checks metadata, the schema and its validation rules.
func (s *strategy) Validate(obj runtime.Object) field.ErrorList {
	return s.ValidateContext(context.Background(), obj)
}

// ValidateContext is Validate with the request's context, which the
// validation rules honour.
func (s *strategy) ValidateContext(ctx context.Context, obj runtime.Object) field.ErrorList {
	m, errs := s.objectMeta(obj)
	if m != nil {
		errs = append(errs, apivalidation.ValidateObjectMeta(m, s.namespaced, apivalidation.NameIsDNSSubdomain, metadataPath)...)
	}
	errs = append(errs, s.validateKind(obj)...)
	errs = append(errs, s.schema.Validate(content(obj))...)
	return append(errs, s.validateRules(ctx, obj, nil, errs)...)
}

// ValidateUpdate checks metadata changes, the schema and its validation
// rules, ratcheting unchanged values.
func (s *strategy) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return s.ValidateUpdateContext(context.Background(), obj, old)
}

// ValidateUpdateContext is ValidateUpdate with the request's context.
func (s *strategy) ValidateUpdateContext(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	errs := s.validateMetaUpdate(obj, old)
	errs = append(errs, s.validateKind(obj)...)
	errs = append(errs, s.schema.ValidateUpdate(content(obj), content(old))...)
	return append(errs, s.validateRules(ctx, obj, old, errs)...)
}

// validateMetaUpdate checks the metadata of an update.
func (s *strategy) validateMetaUpdate(obj, old runtime.Object) field.ErrorList {
	m, errs := s.objectMeta(obj)
	om, _ := s.objectMeta(old)
	if m != nil && om != nil {
		if m.ResourceVersion == "" {
			// An unconditional update: the server resolved it against old.
			m.ResourceVersion = om.ResourceVersion
		}
		errs = append(errs, apivalidation.ValidateObjectMetaUpdate(m, om, metadataPath)...)
	}
	return errs
}

// validateRules runs the x-kubernetes-validations rules on the whole
// object (old is nil on create) unless the errors found before block
// them, as Kubernetes' custom-resource strategy does.
func (s *strategy) validateRules(ctx context.Context, obj, old runtime.Object, before field.ErrorList) field.ErrorList {
	if !s.schema.HasRules() {
		return nil
	}
	if blocked := crdschema.RulesBlocked(before); blocked != nil {
		return field.ErrorList{blocked}
	}
	var prev map[string]any
	if old != nil {
		prev = content(old)
	}
	return s.schema.ValidateRules(ctx, content(obj), prev)
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

// validateKind checks the object's kind.
func (s *strategy) validateKind(obj runtime.Object) field.ErrorList {
	u := obj.(*unstructured.Unstructured)
	if gvk := u.GroupVersionKind(); gvk.Kind != "" && gvk.Kind != s.kind.Kind {
		return field.ErrorList{field.Invalid(field.NewPath("kind"), gvk.Kind, "must be "+s.kind.Kind)}
	}
	return nil
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

// ValidateUpdate checks metadata, the new status against the status
// schema (ratcheting unchanged values) and the validation rules of the
// whole object, as Kubernetes' status strategy does.
func (st statusStrategy) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return st.ValidateUpdateContext(context.Background(), obj, old)
}

// ValidateUpdateContext is ValidateUpdate with the request's context.
func (st statusStrategy) ValidateUpdateContext(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	errs := st.s.validateMetaUpdate(obj, old)
	errs = append(errs, st.s.validateKind(obj)...)
	errs = append(errs, st.s.schema.ValidateStatusUpdate(content(obj), content(old))...)
	return append(errs, st.s.validateRules(ctx, obj, old, errs)...)
}
