package autoscaling

import (
	"fmt"
	"slices"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/validate/content"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

const (
	maxPeriodSeconds              = 1800
	maxStabilizationWindowSeconds = 3600
)

// Values kube-apiserver lists in its messages, sorted as it sorts them.
var (
	selectPolicies = []string{string(autoscalingv2.DisabledPolicySelect), string(autoscalingv2.MaxChangePolicySelect), string(autoscalingv2.MinChangePolicySelect)}
	policyTypes    = []string{string(autoscalingv2.PercentScalingPolicy), string(autoscalingv2.PodsScalingPolicy)}
	metricSources  = []string{string(autoscalingv2.ContainerResourceMetricSourceType), string(autoscalingv2.ExternalMetricSourceType),
		string(autoscalingv2.ObjectMetricSourceType), string(autoscalingv2.PodsMetricSourceType), string(autoscalingv2.ResourceMetricSourceType)}
)

// refOptions are the relaxations of a cross-version reference check.
type refOptions struct {
	allowEmptyGroup, allowInvalidVersion bool
}

// hpaOptions: HPAScaleToZero is on in 1.37, so minReplicas may be 0 (with
// an object or external metric).
type hpaOptions struct {
	target, object refOptions
}

func nonNegative(v int64, p *field.Path) field.ErrorList {
	return apivalidation.ValidateNonnegativeField(v, p)
}

func validateHPA(h *autoscalingv2.HorizontalPodAutoscaler) field.ErrorList {
	errs := strategy.ValidateMeta(&h.ObjectMeta, true, apivalidation.NameIsDNSSubdomain)
	return append(errs, validateHPASpec(&h.Spec, strategy.SpecPath, hpaOptionsFor(h, nil))...)
}

func validateHPAUpdate(h, old *autoscalingv2.HorizontalPodAutoscaler) field.ErrorList {
	errs := strategy.ValidateMetaUpdate(&h.ObjectMeta, &old.ObjectMeta)
	return append(errs, validateHPASpec(&h.Spec, strategy.SpecPath, hpaOptionsFor(h, old))...)
}

func hpaOptionsFor(h, old *autoscalingv2.HorizontalPodAutoscaler) hpaOptions {
	opts := hpaOptions{object: refOptions{allowEmptyGroup: true}}
	ref := h.Spec.ScaleTargetRef
	switch {
	case old != nil && old.Spec.ScaleTargetRef.APIVersion == ref.APIVersion && old.Spec.ScaleTargetRef.Kind == ref.Kind:
		opts.target.allowInvalidVersion = true
	case ref.Kind == "ReplicationController":
		opts.target.allowEmptyGroup = true
	}
	if old != nil {
		for _, m := range old.Spec.Metrics {
			if m.Type == autoscalingv2.ObjectMetricSourceType && m.Object != nil && apiVersionError(m.Object.DescribedObject, opts.object) != nil {
				opts.object.allowInvalidVersion = true
				break
			}
		}
	}
	return opts
}

// validateHPASpec reports the maxReplicas bounds, which kube-apiserver
// checks declaratively, after the others and in its declarative wording,
// as it does.
func validateHPASpec(s *autoscalingv2.HorizontalPodAutoscalerSpec, p *field.Path, opts hpaOptions) field.ErrorList {
	var errs field.ErrorList
	if s.MinReplicas != nil && *s.MinReplicas < 0 {
		errs = append(errs, field.Invalid(p.Child("minReplicas"), *s.MinReplicas, "must be greater than or equal to 0"))
	}
	if s.MinReplicas != nil && s.MaxReplicas < *s.MinReplicas {
		errs = append(errs, field.Invalid(p.Child("maxReplicas"), s.MaxReplicas, "must be greater than or equal to `minReplicas`"))
	}
	errs = append(errs, validateRef(s.ScaleTargetRef, p.Child("scaleTargetRef"), opts.target)...)
	errs = append(errs, validateMetrics(s.Metrics, p.Child("metrics"), s.MinReplicas, opts.object)...)
	if b := s.Behavior; b != nil {
		errs = append(errs, validateRules(b.ScaleUp, p.Child("behavior", "scaleUp"))...)
		errs = append(errs, validateRules(b.ScaleDown, p.Child("behavior", "scaleDown"))...)
	}
	switch {
	case s.MaxReplicas == 0:
		errs = append(errs, field.Required(p.Child("maxReplicas"), ""))
	case s.MaxReplicas < 0:
		errs = append(errs, field.Invalid(p.Child("maxReplicas"), s.MaxReplicas, "must be greater than or equal to 1"))
	}
	return errs
}

func validateRef(ref autoscalingv2.CrossVersionObjectReference, p *field.Path, opts refOptions) field.ErrorList {
	var errs field.ErrorList
	for _, f := range []struct{ name, v string }{{"kind", ref.Kind}, {"name", ref.Name}} {
		if f.v == "" {
			errs = append(errs, field.Required(p.Child(f.name), ""))
			continue
		}
		for _, msg := range content.IsPathSegmentName(f.v) {
			errs = append(errs, field.Invalid(p.Child(f.name), f.v, msg))
		}
	}
	if err := apiVersionError(ref, opts); err != nil {
		errs = append(errs, field.Invalid(p.Child("apiVersion"), ref.APIVersion, err.Error()))
	}
	return errs
}

func apiVersionError(ref autoscalingv2.CrossVersionObjectReference, opts refOptions) error {
	if opts.allowInvalidVersion {
		return nil
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return err
	}
	if !opts.allowEmptyGroup && gv.Group == "" {
		return fmt.Errorf("apiVersion must specify API group")
	}
	return nil
}

func validateRules(r *autoscalingv2.HPAScalingRules, p *field.Path) field.ErrorList {
	if r == nil {
		return nil
	}
	var errs field.ErrorList
	if w := r.StabilizationWindowSeconds; w != nil && *w < 0 {
		errs = append(errs, field.Invalid(p.Child("stabilizationWindowSeconds"), w, "must be greater than or equal to zero"))
	}
	if w := r.StabilizationWindowSeconds; w != nil && *w > maxStabilizationWindowSeconds {
		errs = append(errs, field.Invalid(p.Child("stabilizationWindowSeconds"), w, fmt.Sprintf("must be less than or equal to %v", maxStabilizationWindowSeconds)))
	}
	if sp := r.SelectPolicy; sp != nil && !slices.Contains(selectPolicies, string(*sp)) {
		errs = append(errs, field.NotSupported(p.Child("selectPolicy"), sp, selectPolicies))
	}
	pp := p.Child("policies")
	if len(r.Policies) == 0 {
		errs = append(errs, field.Required(pp, "must specify at least one Policy"))
	}
	for i, pol := range r.Policies {
		ip := pp.Index(i)
		if !slices.Contains(policyTypes, string(pol.Type)) {
			errs = append(errs, field.NotSupported(ip.Child("type"), pol.Type, policyTypes))
		}
		if pol.Value <= 0 {
			errs = append(errs, field.Invalid(ip.Child("value"), pol.Value, "must be greater than zero"))
		}
		if pol.PeriodSeconds <= 0 {
			errs = append(errs, field.Invalid(ip.Child("periodSeconds"), pol.PeriodSeconds, "must be greater than zero"))
		}
		if pol.PeriodSeconds > maxPeriodSeconds {
			errs = append(errs, field.Invalid(ip.Child("periodSeconds"), pol.PeriodSeconds, fmt.Sprintf("must be less than or equal to %v", maxPeriodSeconds)))
		}
	}
	if t := r.Tolerance; t != nil {
		if t.Sign() < 0 {
			errs = append(errs, field.Invalid(p.Child("tolerance"), t.String(), "must be greater than or equal to 0"))
		}
	}
	return errs
}

func validateMetrics(ms []autoscalingv2.MetricSpec, p *field.Path, minReplicas *int32, opts refOptions) field.ErrorList {
	var errs field.ErrorList
	objectOrExternal := false
	for i := range ms {
		errs = append(errs, validateMetricSpec(&ms[i], p.Index(i), opts)...)
		t := ms[i].Type
		objectOrExternal = objectOrExternal || t == autoscalingv2.ObjectMetricSourceType || t == autoscalingv2.ExternalMetricSourceType
	}
	if minReplicas != nil && *minReplicas == 0 && !objectOrExternal {
		errs = append(errs, field.Forbidden(p, "must specify at least one Object or External metric to support scaling to zero replicas"))
	}
	return errs
}

// validateMetricSpec checks that exactly the source named by type is
// given, and the source itself.
func validateMetricSpec(m *autoscalingv2.MetricSpec, p *field.Path, opts refOptions) field.ErrorList {
	var errs field.ErrorList
	if m.Type == "" {
		errs = append(errs, field.Required(p.Child("type"), "must specify a metric source type"))
	}
	if !slices.Contains(metricSources, string(m.Type)) {
		errs = append(errs, field.NotSupported(p.Child("type"), m.Type, metricSources))
	}
	var present []string
	check := func(name string, set bool, fn func() field.ErrorList) {
		if !set {
			return
		}
		present = append(present, name)
		if len(present) == 1 {
			errs = append(errs, fn()...)
		}
	}
	check("object", m.Object != nil, func() field.ErrorList { return validateObjectSource(m.Object, p.Child("object"), opts) })
	check("external", m.External != nil, func() field.ErrorList { return validateExternalSource(m.External, p.Child("external")) })
	check("pods", m.Pods != nil, func() field.ErrorList { return validatePodsSource(m.Pods, p.Child("pods")) })
	check("resource", m.Resource != nil, func() field.ErrorList { return validateResourceSource(m.Resource, p.Child("resource")) })
	check("containerResource", m.ContainerResource != nil, func() field.ErrorList {
		return validateContainerResourceSource(m.ContainerResource, p.Child("containerResource"))
	})
	// An unknown type is reported once, above.
	if expected, set := expectedSource(m); expected != "" && !set {
		errs = append(errs, field.Required(p.Child(expected), "must populate information for the given metric source"))
	}
	if expected, _ := expectedSource(m); len(present) != 1 {
		for _, name := range present {
			if name != expected {
				errs = append(errs, field.Forbidden(p.Child(name), "must populate the given metric source only"))
			}
		}
	}
	return errs
}

// expectedSource names the source field of the metric's type and whether
// it is set ("" for an unknown type).
func expectedSource(m *autoscalingv2.MetricSpec) (string, bool) {
	switch m.Type {
	case autoscalingv2.ObjectMetricSourceType:
		return "object", m.Object != nil
	case autoscalingv2.PodsMetricSourceType:
		return "pods", m.Pods != nil
	case autoscalingv2.ResourceMetricSourceType:
		return "resource", m.Resource != nil
	case autoscalingv2.ExternalMetricSourceType:
		return "external", m.External != nil
	case autoscalingv2.ContainerResourceMetricSourceType:
		return "containerResource", m.ContainerResource != nil
	}
	return "", false
}

func validateObjectSource(s *autoscalingv2.ObjectMetricSource, p *field.Path, opts refOptions) field.ErrorList {
	errs := validateRef(s.DescribedObject, p.Child("describedObject"), opts)
	errs = append(errs, validateMetricID(s.Metric, p.Child("metric"))...)
	errs = append(errs, validateTarget(s.Target, p.Child("target"))...)
	if s.Target.Value == nil && s.Target.AverageValue == nil {
		errs = append(errs, field.Required(p.Child("target", "averageValue"), "must set either a target value or averageValue"))
	}
	return errs
}

func validateExternalSource(s *autoscalingv2.ExternalMetricSource, p *field.Path) field.ErrorList {
	errs := validateMetricID(s.Metric, p.Child("metric"))
	errs = append(errs, validateTarget(s.Target, p.Child("target"))...)
	if s.Target.Value == nil && s.Target.AverageValue == nil {
		errs = append(errs, field.Required(p.Child("target", "averageValue"), "must set either a target value for metric or a per-pod target"))
	}
	if s.Target.Value != nil && s.Target.AverageValue != nil {
		errs = append(errs, field.Forbidden(p.Child("target", "value"), "may not set both a target value for metric and a per-pod target"))
	}
	return errs
}

func validatePodsSource(s *autoscalingv2.PodsMetricSource, p *field.Path) field.ErrorList {
	errs := validateMetricID(s.Metric, p.Child("metric"))
	errs = append(errs, validateTarget(s.Target, p.Child("target"))...)
	if s.Target.AverageValue == nil {
		errs = append(errs, field.Required(p.Child("target", "averageValue"), "must specify a positive target averageValue"))
	}
	return errs
}

func validateContainerResourceSource(s *autoscalingv2.ContainerResourceMetricSource, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), "must specify a resource name"))
	} else {
		errs = append(errs, validateContainerResourceName(string(s.Name), p.Child("name"))...)
	}
	if s.Container == "" {
		errs = append(errs, field.Required(p.Child("container"), "must specify a container"))
	} else {
		errs = append(errs, strategy.ValidateName(p.Child("container"), s.Container, validation.IsDNS1123Label)...)
	}
	return append(errs, validateUtilizationTarget(s.Target, p.Child("target"))...)
}

func validateResourceSource(s *autoscalingv2.ResourceMetricSource, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), "must specify a resource name"))
	}
	return append(errs, validateUtilizationTarget(s.Target, p.Child("target"))...)
}

func validateUtilizationTarget(t autoscalingv2.MetricTarget, p *field.Path) field.ErrorList {
	errs := validateTarget(t, p)
	if t.AverageUtilization == nil && t.AverageValue == nil {
		errs = append(errs, field.Required(p.Child("averageUtilization"), "must set either a target raw value or a target utilization"))
	}
	if t.AverageUtilization != nil && t.AverageValue != nil {
		errs = append(errs, field.Forbidden(p.Child("averageValue"), "may not set both a target raw value and a target utilization"))
	}
	return errs
}

// validateContainerResourceName accepts the names of compute resources a
// container may request: a qualified name, with a domain unless native.
func validateContainerResourceName(name string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(name) {
		errs = append(errs, field.Invalid(p, name, msg))
	}
	if len(errs) > 0 {
		return errs
	}
	switch name {
	case "cpu", "memory", "ephemeral-storage":
		return nil
	}
	if !slices.Contains([]byte(name), '/') {
		return field.ErrorList{field.Invalid(p, name, "must be a standard resource for containers")}
	}
	return nil
}

func validateTarget(t autoscalingv2.MetricTarget, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if t.Type == "" {
		errs = append(errs, field.Required(p.Child("type"), "must specify a metric target type"))
	}
	if t.Type != autoscalingv2.UtilizationMetricType && t.Type != autoscalingv2.ValueMetricType && t.Type != autoscalingv2.AverageValueMetricType {
		errs = append(errs, field.Invalid(p.Child("type"), t.Type, "must be either Utilization, Value, or AverageValue"))
	}
	if t.Value != nil && t.Value.Sign() != 1 {
		errs = append(errs, field.Invalid(p.Child("value"), t.Value, "must be positive"))
	}
	if t.AverageValue != nil && t.AverageValue.Sign() != 1 {
		errs = append(errs, field.Invalid(p.Child("averageValue"), t.AverageValue, "must be positive"))
	}
	if t.AverageUtilization != nil && *t.AverageUtilization < 1 {
		errs = append(errs, field.Invalid(p.Child("averageUtilization"), t.AverageUtilization, "must be greater than 0"))
	}
	return errs
}

func validateMetricID(id autoscalingv2.MetricIdentifier, p *field.Path) field.ErrorList {
	if id.Name == "" {
		return field.ErrorList{field.Required(p.Child("name"), "must specify a metric name")}
	}
	var errs field.ErrorList
	for _, msg := range content.IsPathSegmentName(id.Name) {
		errs = append(errs, field.Invalid(p.Child("name"), id.Name, msg))
	}
	return errs
}
