package dra

import (
	"encoding/json"

	resourcev1 "k8s.io/api/resource/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/printers"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

func resourceClaimTemplatesResource() *registry.Resource {
	type tmpl = resourcev1.ResourceClaimTemplate
	sel := &selectorCompiler{}
	validate := func(t *tmpl) field.ErrorList {
		errs := strategy.ValidateMeta(&t.ObjectMeta, true, apivalidation.NameIsDNSSubdomain)
		errs = append(errs, strategy.ValidateTemplateMeta(&t.Spec.ObjectMeta, strategy.SpecPath.Child("metadata"))...)
		return declarativeLast(append(errs, validateClaimSpec(strategy.SpecPath.Child("spec"), &t.Spec.Spec, sel)...))
	}
	return &registry.Resource{
		Group: Group, Version: "v1", Resource: "resourceclaimtemplates", Kind: "ResourceClaimTemplate",
		ListKind: "ResourceClaimTemplateList", Singular: "resourceclaimtemplate", Namespaced: true, NoGeneration: true,
		ReturnDeletedObject: true, // as kube-apiserver: DELETE answers the deleted object
		New:                 func() runtime.Object { return &tmpl{} },
		NewList:             func() runtime.Object { return &resourcev1.ResourceClaimTemplateList{} },
		Strategy: strategy.Typed[*tmpl]{
			PrepareCreate: func(t *tmpl) { dropDisabledClaimFields(&t.Spec.Spec, nil) },
			PrepareUpdate: func(t, old *tmpl) { dropDisabledClaimFields(&t.Spec.Spec, &old.Spec.Spec) },
			Defaults:      func(t *tmpl) { defaultClaimSpec(&t.Spec.Spec) },
			ValidateNew:   validate,
			ValidateChange: func(t, old *tmpl) field.ErrorList {
				errs := strategy.ValidateMetaUpdate(&t.ObjectMeta, &old.ObjectMeta)
				if !apiequality.Semantic.DeepEqual(t.Spec, old.Spec) {
					errs = append(errs, field.Invalid(strategy.SpecPath, templateSpecValue(&t.Spec), "field is immutable"))
				}
				return errs
			},
		},
		Admit: admitAdminAccess(adminCheck{kind: "ResourceClaimTemplate",
			requests: func(obj runtime.Object) ([]resourcev1.DeviceRequest, bool) {
				t, ok := obj.(*tmpl)
				if !ok {
					return nil, false
				}
				return t.Spec.Spec.Devices.Requests, true
			},
			validate: func(obj runtime.Object) field.ErrorList { return validate(obj.(*tmpl)) },
		}),
		Attrs:           strategy.Attrs[*tmpl](true, nil),
		FieldLabelError: strategy.UnknownFieldLabel,
		Table:           printers.For(Group, "ResourceClaimTemplate"),
	}
}

// templateSpecValue renders a template spec as kube-apiserver's internal
// type marshals: the metadata inline (its JSON fields), then "Spec" with
// Go field names.
func templateSpecValue(s *resourcev1.ResourceClaimTemplateSpec) json.RawMessage {
	meta, err := json.Marshal(s.ObjectMeta)
	if err != nil || string(meta) == "{}" {
		meta = []byte("{")
	} else {
		meta = append(meta[:len(meta)-1], ',')
	}
	return append(append(meta, `"Spec":`...), append(goJSON(s.Spec), '}')...)
}
