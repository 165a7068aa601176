package dra

import (
	"context"

	resourcev1 "k8s.io/api/resource/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/operation"
	"k8s.io/apimachinery/pkg/api/validate"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/printers"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

func deviceClassesResource() *registry.Resource {
	type class = resourcev1.DeviceClass
	sel := &selectorCompiler{}
	return &registry.Resource{
		Group: Group, Version: "v1", Resource: "deviceclasses", Kind: "DeviceClass", ListKind: "DeviceClassList",
		Singular:            "deviceclass",
		ReturnDeletedObject: true, // as kube-apiserver: DELETE answers the deleted object
		New:                 func() runtime.Object { return &class{} },
		NewList:             func() runtime.Object { return &resourcev1.DeviceClassList{} },
		Strategy: strategy.Typed[*class]{
			ValidateNew: func(c *class) field.ErrorList {
				errs := validateClassMeta(&c.ObjectMeta)
				return declarativeLast(append(errs, validateDeviceClassSpec(&c.Spec, nil, sel)...))
			},
			ValidateChange: func(c, old *class) field.ErrorList {
				errs := validateClassMeta(&c.ObjectMeta)
				errs = append(errs, strategy.ValidateMetaUpdate(&c.ObjectMeta, &old.ObjectMeta)...)
				return declarativeLast(append(errs, validateDeviceClassSpec(&c.Spec, &old.Spec, sel)...))
			},
		},
		Attrs:           strategy.Attrs(false, strategy.NamespaceField[*class]),
		FieldLabelError: strategy.UnknownFieldLabel,
		Table:           printers.For(Group, "DeviceClass"),
	}
}

// validateClassMeta checks a class's metadata; kube-apiserver v1.37 checks
// the name declaratively (reported last).
func validateClassMeta(m *metav1.ObjectMeta) field.ErrorList {
	errs := strategy.ValidateMeta(m, false, func(string, bool) []string { return nil })
	if m.Name != "" {
		errs = append(errs, covered(validate.LongName(context.Background(), operation.Operation{}, strategy.MetadataPath.Child("name"), &m.Name, nil))...)
	}
	return errs
}

// validateDeviceClassSpec: selectors whose expressions compile (unchanged
// ones are not compiled again), opaque configurations, an extended
// resource name.
func validateDeviceClassSpec(s, old *resourcev1.DeviceClassSpec, sel *selectorCompiler) field.ErrorList {
	p := strategy.SpecPath
	stored := old != nil && apiequality.Semantic.DeepEqual(s.Selectors, old.Selectors)
	errs := validateSelectors(p.Child("selectors"), s.Selectors, sel, stored)
	stored = old != nil && apiequality.Semantic.DeepEqual(s.Config, old.Config)
	errs = append(errs, validateList(p.Child("config"), s.Config, resourcev1.DeviceConfigMaxSize,
		func(p *field.Path, c *resourcev1.DeviceClassConfiguration) field.ErrorList {
			return validateOpaque(p, &c.DeviceConfiguration, stored)
		}, listOpts{sizeCovered: true})...)
	if n := s.ExtendedResourceName; n != nil {
		errs = append(errs, covered(validate.ExtendedResourceName(context.Background(), operation.Operation{}, p.Child("extendedResourceName"), n, nil))...)
	}
	return errs
}
