package apps

import (
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/printers"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/podspec"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

func daemonSetsResource() *registry.Resource {
	return &registry.Resource{
		Group: "apps", Version: "v1", Resource: "daemonsets", Kind: "DaemonSet", ListKind: "DaemonSetList",
		Singular: "daemonset", ShortNames: []string{"ds"}, Categories: []string{"all"}, Namespaced: true,
		New:     func() runtime.Object { return &appsv1.DaemonSet{} },
		NewList: func() runtime.Object { return &appsv1.DaemonSetList{} },
		Strategy: strategy.Typed[*appsv1.DaemonSet]{
			PrepareCreate:  prepareDaemonSetCreate,
			PrepareUpdate:  prepareDaemonSetUpdate,
			Defaults:       defaultDaemonSet,
			ValidateNew:    validateDaemonSet,
			ValidateChange: validateDaemonSetUpdate,
			Warn:           daemonSetWarnings,
		},
		Status: strategy.TypedStatus[*appsv1.DaemonSet]{
			PrepareUpdate: func(ds, old *appsv1.DaemonSet) {
				ds.Spec = old.Spec
				setTemplateGeneration(ds, templateGeneration(old))
			},
			ValidateChange: validateDaemonSetStatusUpdate,
		},
		Attrs:           strategy.Attrs[*appsv1.DaemonSet](true, nil),
		FieldLabelError: strategy.UnknownFieldLabel,
		Table:           printers.For("apps", "DaemonSet"),
	}
}

// templateGeneration is the daemon set's template generation, which apps/v1
// carries in the deprecated.daemonset.template.generation annotation (0
// when absent or not a number).
func templateGeneration(ds *appsv1.DaemonSet) int64 {
	n, err := strconv.ParseInt(ds.Annotations[appsv1.DeprecatedTemplateGeneration], 10, 64)
	if err != nil {
		return 0
	}
	return n
}

func setTemplateGeneration(ds *appsv1.DaemonSet, n int64) {
	if ds.Annotations == nil {
		ds.Annotations = map[string]string{}
	}
	ds.Annotations[appsv1.DeprecatedTemplateGeneration] = strconv.FormatInt(n, 10)
}

func prepareDaemonSetCreate(ds *appsv1.DaemonSet) {
	ds.Status = appsv1.DaemonSetStatus{}
	podspec.DropDisabledTemplateFields(&ds.Spec.Template, nil)
	setTemplateGeneration(ds, max(templateGeneration(ds), 1))
}

// prepareDaemonSetUpdate keeps the status and moves the template
// generation by one when the template changes, as Kubernetes does.
func prepareDaemonSetUpdate(ds, old *appsv1.DaemonSet) {
	ds.Status = old.Status
	podspec.DropDisabledTemplateFields(&ds.Spec.Template, &old.Spec.Template)
	tg := templateGeneration(old)
	if !equality.Semantic.DeepEqual(ds.Spec.Template, old.Spec.Template) {
		tg++
	}
	setTemplateGeneration(ds, tg)
}

func defaultDaemonSet(ds *appsv1.DaemonSet) {
	if _, ok := ds.Annotations[appsv1.DeprecatedTemplateGeneration]; !ok {
		// As kube-apiserver, whose apps/v1 form always carries the
		// template generation (0 until the strategy sets it): the
		// writer owns the annotation in managedFields.
		setTemplateGeneration(ds, 0)
	}
	us := &ds.Spec.UpdateStrategy
	if us.Type == "" {
		us.Type = appsv1.RollingUpdateDaemonSetStrategyType
	}
	if us.Type == appsv1.RollingUpdateDaemonSetStrategyType {
		if us.RollingUpdate == nil {
			us.RollingUpdate = &appsv1.RollingUpdateDaemonSet{}
		}
		if us.RollingUpdate.MaxUnavailable == nil {
			us.RollingUpdate.MaxUnavailable = new(intstr.FromInt32(1))
		}
		if us.RollingUpdate.MaxSurge == nil {
			us.RollingUpdate.MaxSurge = new(intstr.FromInt32(0))
		}
	}
	if ds.Spec.RevisionHistoryLimit == nil {
		ds.Spec.RevisionHistoryLimit = new(int32(10))
	}
	podspec.DefaultPodSpec(&ds.Spec.Template.Spec)
}

func validateDaemonSet(ds *appsv1.DaemonSet) field.ErrorList {
	errs := strategy.ValidateMeta(&ds.ObjectMeta, true, apivalidation.NameIsDNSSubdomain)
	return append(errs, validateDaemonSetSpec(&ds.Spec, strategy.SpecPath)...)
}

func validateDaemonSetSpec(s *appsv1.DaemonSetSpec, p *field.Path) field.ErrorList {
	sp, tp := p.Child("selector"), p.Child("template")
	errs := metav1validation.ValidateLabelSelector(s.Selector, metav1validation.LabelSelectorValidationOptions{}, sp)
	if sel, err := metav1.LabelSelectorAsSelector(s.Selector); err == nil && !sel.Matches(labels.Set(s.Template.Labels)) {
		errs = append(errs, field.Invalid(tp.Child("metadata", "labels"), s.Template.Labels, "`selector` does not match template `labels`"))
	}
	if s.Selector != nil && len(s.Selector.MatchLabels)+len(s.Selector.MatchExpressions) == 0 {
		errs = append(errs, field.Invalid(sp, s.Selector, "empty selector is invalid for daemonset"))
	}
	errs = append(errs, podspec.ValidatePodTemplate(&s.Template, tp)...)
	if s.Template.Spec.RestartPolicy != corev1.RestartPolicyAlways {
		errs = append(errs, field.NotSupported(tp.Child("spec", "restartPolicy"), s.Template.Spec.RestartPolicy, []string{string(corev1.RestartPolicyAlways)}))
	}
	if s.Template.Spec.ActiveDeadlineSeconds != nil {
		errs = append(errs, field.Forbidden(tp.Child("spec", "activeDeadlineSeconds"), "activeDeadlineSeconds in DaemonSet is not Supported"))
	}
	errs = append(errs, apivalidation.ValidateNonnegativeField(int64(s.MinReadySeconds), p.Child("minReadySeconds"))...)
	errs = append(errs, validateDaemonSetStrategy(&s.UpdateStrategy, p.Child("updateStrategy"))...)
	return append(errs, strategy.ValidateNonNegative(p.Child("revisionHistoryLimit"), s.RevisionHistoryLimit)...)
}

func validateDaemonSetStrategy(s *appsv1.DaemonSetUpdateStrategy, p *field.Path) field.ErrorList {
	switch s.Type {
	case appsv1.OnDeleteDaemonSetStrategyType:
		return nil
	case appsv1.RollingUpdateDaemonSetStrategyType:
		ru := s.RollingUpdate
		if ru == nil {
			return field.ErrorList{field.Required(p.Child("rollingUpdate"), "")}
		}
		rp := p.Child("rollingUpdate")
		mu, ms := intOrZero(ru.MaxUnavailable), intOrZero(ru.MaxSurge)
		errs := strategy.ValidateIntOrPercent(&mu, rp.Child("maxUnavailable"))
		errs = append(errs, strategy.ValidateIntOrPercent(&ms, rp.Child("maxSurge"))...)
		errs = append(errs, notMoreThan100Percent(&mu, rp.Child("maxUnavailable"))...)
		errs = append(errs, notMoreThan100Percent(&ms, rp.Child("maxSurge"))...)
		hasUnavailable, hasSurge := intOrPercentValue(&mu) != 0, intOrPercentValue(&ms) != 0
		switch {
		case hasUnavailable && hasSurge:
			errs = append(errs, field.Invalid(rp.Child("maxSurge"), ms, "may not be set when maxUnavailable is non-zero"))
		case !hasUnavailable && !hasSurge:
			errs = append(errs, field.Required(rp.Child("maxUnavailable"), "cannot be 0 when maxSurge is 0"))
		}
		return errs
	}
	return field.ErrorList{field.NotSupported(p, internalDaemonSetStrategy(s),
		[]string{string(appsv1.RollingUpdateDaemonSetStrategyType), string(appsv1.OnDeleteDaemonSetStrategyType)})}
}

func intOrZero(v *intstr.IntOrString) intstr.IntOrString {
	if v == nil {
		return intstr.IntOrString{}
	}
	return *v
}

// validateDaemonSetUpdate also makes spec.selector immutable.
func validateDaemonSetUpdate(ds, old *appsv1.DaemonSet) field.ErrorList {
	errs := strategy.ValidateMetaUpdate(&ds.ObjectMeta, &old.ObjectMeta)
	errs = append(errs, apivalidation.ValidateImmutableField(ds.Spec.Selector, old.Spec.Selector, strategy.SpecPath.Child("selector"))...)
	return append(errs, validateDaemonSetSpec(&ds.Spec, strategy.SpecPath)...)
}

func validateDaemonSetStatusUpdate(ds, old *appsv1.DaemonSet) field.ErrorList {
	errs := strategy.ValidateMetaUpdate(&ds.ObjectMeta, &old.ObjectMeta)
	s, p := &ds.Status, strategy.StatusPath
	for _, c := range []struct {
		name string
		v    int64
	}{{"currentNumberScheduled", int64(s.CurrentNumberScheduled)}, {"numberMisscheduled", int64(s.NumberMisscheduled)},
		{"desiredNumberScheduled", int64(s.DesiredNumberScheduled)}, {"numberReady", int64(s.NumberReady)},
		{"observedGeneration", s.ObservedGeneration}, {"updatedNumberScheduled", int64(s.UpdatedNumberScheduled)},
		{"numberAvailable", int64(s.NumberAvailable)}, {"numberUnavailable", int64(s.NumberUnavailable)}} {
		errs = append(errs, apivalidation.ValidateNonnegativeField(c.v, p.Child(c.name))...)
	}
	errs = append(errs, strategy.ValidateNonNegative(p.Child("collisionCount"), s.CollisionCount)...)
	return append(errs, collisionCountDecrement(s.CollisionCount, old.Status.CollisionCount)...)
}
