package core

import (
	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/printers"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/podspec"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

var templatePath = field.NewPath("template")

// podTemplatesResource serves podtemplates: a pod template kept for others
// to use. Any change of the template moves metadata.generation.
func podTemplatesResource() *registry.Resource {
	return &registry.Resource{
		Version: "v1", Resource: "podtemplates", Kind: "PodTemplate", ListKind: "PodTemplateList",
		Singular: "podtemplate", Namespaced: true,
		ReturnDeletedObject: true,
		New:                 func() runtime.Object { return &corev1.PodTemplate{} },
		NewList:             func() runtime.Object { return &corev1.PodTemplateList{} },
		Strategy: strategy.Typed[*corev1.PodTemplate]{
			PrepareCreate: func(t *corev1.PodTemplate) { podspec.DropDisabledTemplateFields(&t.Template, nil) },
			PrepareUpdate: func(t, old *corev1.PodTemplate) { podspec.DropDisabledTemplateFields(&t.Template, &old.Template) },
			Defaults:      func(t *corev1.PodTemplate) { podspec.DefaultPodSpec(&t.Template.Spec) },
			ValidateNew:   validatePodTemplate,
			ValidateChange: func(t, old *corev1.PodTemplate) field.ErrorList {
				errs := strategy.ValidateMetaUpdate(&t.ObjectMeta, &old.ObjectMeta)
				return append(errs, validateTemplateSpec(&t.Template, templatePath)...)
			},
			Warn: podTemplateWarnings,
		},
		Attrs: strategy.Attrs[*corev1.PodTemplate](true, nil),
		Table: printers.For("", "PodTemplate"),
	}
}

func validatePodTemplate(t *corev1.PodTemplate) field.ErrorList {
	errs := strategy.ValidateMeta(&t.ObjectMeta, true, apivalidation.NameIsDNSSubdomain)
	return append(errs, validateTemplateSpec(&t.Template, templatePath)...)
}

// validateTemplateSpec checks a pod template of the core group as
// kube-apiserver does: its labels and annotations (at <p>.labels and
// <p>.annotations), its pod spec, and no ephemeral containers.
func validateTemplateSpec(t *corev1.PodTemplateSpec, p *field.Path) field.ErrorList {
	errs := metav1validation.ValidateLabels(t.Labels, p.Child("labels"))
	errs = append(errs, apivalidation.ValidateAnnotations(t.Annotations, p.Child("annotations"))...)
	errs = append(errs, podspec.ValidatePodSpec(&t.Spec, "", p.Child("spec"))...)
	if len(t.Spec.EphemeralContainers) > 0 {
		errs = append(errs, field.Forbidden(p.Child("spec", "ephemeralContainers"), "ephemeral containers not allowed in pod template"))
	}
	return errs
}
