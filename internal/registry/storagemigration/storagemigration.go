package storagemigration

import (
	"strings"

	svmv1 "k8s.io/api/storagemigration/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/printers"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

// Group is the API group of the package's resource.
const Group = "storagemigration.k8s.io"

// Resources returns the descriptors of the storagemigration.k8s.io/v1
// resources, new on each call.
func Resources() []*registry.Resource {
	return []*registry.Resource{storageVersionMigrationsResource()}
}

func storageVersionMigrationsResource() *registry.Resource {
	type svm = svmv1.StorageVersionMigration
	return &registry.Resource{
		Group: Group, Version: "v1", Resource: "storageversionmigrations", Kind: "StorageVersionMigration",
		ListKind: "StorageVersionMigrationList", Singular: "storageversionmigration", NoGeneration: true,
		StorageVersion:        "v1beta1", // kube-apiserver's storage version: discovery's storageVersionHash
		NoUnconditionalUpdate: true,      // as kube-apiserver: a PUT must name a resourceVersion
		New:                   func() runtime.Object { return &svm{} },
		NewList:               func() runtime.Object { return &svmv1.StorageVersionMigrationList{} },
		Strategy: strategy.Typed[*svm]{
			PrepareCreate: func(m *svm) { m.Status = svmv1.StorageVersionMigrationStatus{} },
			PrepareUpdate: func(m, old *svm) { m.Status = old.Status },
			ValidateNew: func(m *svm) field.ErrorList {
				errs := strategy.ValidateMeta(&m.ObjectMeta, false, apivalidation.NameIsDNSSubdomain)
				return append(errs, validateSpec(&m.Spec)...)
			},
			ValidateChange: func(m, old *svm) field.ErrorList {
				errs := validateSpec(&m.Spec)
				errs = append(errs, strategy.ValidateMetaUpdate(&m.ObjectMeta, &old.ObjectMeta)...)
				if m.Spec != old.Spec {
					// The value as kube-apiserver renders its internal spec.
					v := struct{ Resource metav1.GroupResource }{m.Spec.Resource}
					errs = append(errs, field.Invalid(strategy.SpecPath, v, "field is immutable"))
				}
				return errs
			},
		},
		Status: strategy.TypedStatus[*svm]{
			PrepareUpdate: func(m, old *svm) {
				m.Spec = old.Spec
				strategy.ResetMetaForStatus(&m.ObjectMeta, &old.ObjectMeta)
			},
			ValidateChange: validateStatusUpdate,
		},
		Attrs:           strategy.Attrs(false, strategy.NamespaceField[*svm]),
		FieldLabelError: strategy.UnknownFieldLabel,
		Table:           printers.For(Group, "StorageVersionMigration"),
	}
}

func validateSpec(s *svmv1.StorageVersionMigrationSpec) field.ErrorList {
	p := strategy.SpecPath.Child("resource")
	var errs field.ErrorList
	if s.Resource.Resource == "" {
		errs = append(errs, field.Required(p.Child("resource"), "resource is required to be set"))
	} else if msgs := validation.IsDNS1035Label(s.Resource.Resource); len(msgs) > 0 {
		errs = append(errs, field.Invalid(p.Child("resource"), s.Resource.Resource, strings.Join(msgs, ",")))
	}
	if s.Resource.Group != "" {
		if msgs := validation.IsDNS1123Subdomain(s.Resource.Group); len(msgs) > 0 {
			errs = append(errs, field.Invalid(p.Child("group"), s.Resource.Group, strings.Join(msgs, ",")))
		}
	}
	return errs
}

// validateStatusUpdate: a well-formed resourceVersion that never changes
// once set, valid conditions, never Succeeded and Failed together, and
// neither withdrawn once true.
func validateStatusUpdate(m, old *svmv1.StorageVersionMigration) field.ErrorList {
	errs := strategy.ValidateMetaUpdate(&m.ObjectMeta, &old.ObjectMeta)
	p := strategy.StatusPath
	rv := m.Status.ResourceVersion
	if rv != "" {
		if _, err := resourceversion.CompareResourceVersion(rv, rv); err != nil {
			errs = append(errs, field.Invalid(p.Child("resourceVersion"), rv, err.Error()))
		}
	}
	errs = append(errs, metav1validation.ValidateConditions(m.Status.Conditions, p.Child("conditions"))...)
	if old.Status.ResourceVersion != "" && old.Status.ResourceVersion != rv {
		errs = append(errs, field.Invalid(p.Child("resourceVersion"), rv, "field is immutable"))
	}
	conds := p.Child("conditions")
	if isTrue(m, svmv1.MigrationSucceeded) && isTrue(m, svmv1.MigrationFailed) {
		errs = append(errs, field.Invalid(conds, m.Status.Conditions, "Both success and failed conditions cannot be true at the same time"))
	}
	if isTrue(old, svmv1.MigrationSucceeded) && !isTrue(m, svmv1.MigrationSucceeded) {
		errs = append(errs, field.Invalid(conds, m.Status.Conditions, "Success condition cannot be set to false once it is true"))
	}
	if isTrue(old, svmv1.MigrationFailed) && !isTrue(m, svmv1.MigrationFailed) {
		errs = append(errs, field.Invalid(conds, m.Status.Conditions, "Failed condition cannot be set to false once it is true"))
	}
	return errs
}

func isTrue(m *svmv1.StorageVersionMigration, t svmv1.MigrationConditionType) bool {
	c := apimeta.FindStatusCondition(m.Status.Conditions, string(t))
	return c != nil && c.Status == metav1.ConditionTrue
}
