package apps

import (
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/printers"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

// controllerRevisionsResource: immutable snapshots of a controller's
// template. Kubernetes' strategy keeps no generation and has no status.
func controllerRevisionsResource() *registry.Resource {
	return &registry.Resource{
		Group: "apps", Version: "v1", Resource: "controllerrevisions", Kind: "ControllerRevision",
		ListKind: "ControllerRevisionList", Singular: "controllerrevision", Namespaced: true,
		New:     func() runtime.Object { return &appsv1.ControllerRevision{} },
		NewList: func() runtime.Object { return &appsv1.ControllerRevisionList{} },
		Strategy: strategy.Typed[*appsv1.ControllerRevision]{
			ValidateNew:    validateControllerRevision,
			ValidateChange: validateControllerRevisionUpdate,
		},
		NoGeneration:    true,
		Attrs:           strategy.Attrs[*appsv1.ControllerRevision](true, nil),
		FieldLabelError: strategy.UnknownFieldLabel,
		Table:           printers.For("apps", "ControllerRevision"),
	}
}

func validateControllerRevisionCommon(cr *appsv1.ControllerRevision) field.ErrorList {
	return apivalidation.ValidateNonnegativeField(cr.Revision, field.NewPath("revision"))
}

// validateControllerRevision requires data to be a JSON object.
func validateControllerRevision(cr *appsv1.ControllerRevision) field.ErrorList {
	errs := strategy.ValidateMeta(&cr.ObjectMeta, true, apivalidation.NameIsDNSSubdomain)
	errs = append(errs, validateControllerRevisionCommon(cr)...)
	dp := field.NewPath("data")
	var v any
	switch raw := revisionData(cr); {
	case raw == nil:
		errs = append(errs, field.Required(dp, "data is mandatory"))
	case json.Unmarshal(raw, &v) != nil:
		err := json.Unmarshal(raw, &v)
		errs = append(errs, field.Invalid(dp, "<value omitted>", fmt.Sprintf("error parsing data: %v", err.Error())))
	case v == nil:
		errs = append(errs, field.Required(dp, "data is mandatory"))
	default:
		if _, ok := v.(map[string]any); !ok {
			errs = append(errs, field.Required(dp, "data must be a valid JSON object"))
		}
	}
	return errs
}

// revisionData is the raw JSON of data, nil when unset.
func revisionData(cr *appsv1.ControllerRevision) []byte {
	if cr.Data.Raw != nil {
		return cr.Data.Raw
	}
	if cr.Data.Object != nil {
		b, err := json.Marshal(cr.Data.Object)
		if err == nil {
			return b
		}
	}
	return nil
}

// validateControllerRevisionUpdate makes data immutable.
func validateControllerRevisionUpdate(cr, old *appsv1.ControllerRevision) field.ErrorList {
	errs := strategy.ValidateMetaUpdate(&cr.ObjectMeta, &old.ObjectMeta)
	errs = append(errs, strategy.ValidateMeta(&cr.ObjectMeta, true, apivalidation.NameIsDNSSubdomain)...)
	errs = append(errs, validateControllerRevisionCommon(cr)...)
	return append(errs, apivalidation.ValidateImmutableField(cr.Data, old.Data, field.NewPath("data"))...)
}
