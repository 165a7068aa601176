package builtin

import (
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/printers"
	"github.com/setpoint-dev/setpoint/internal/registry"
)

func deploymentsResource() *registry.Resource {
	return &registry.Resource{
		Group: "apps", Version: "v1", Resource: "deployments", Kind: "Deployment", ListKind: "DeploymentList",
		Singular: "deployment", ShortNames: []string{"deploy"}, Categories: []string{"all"}, Namespaced: true,
		New:     func() runtime.Object { return &appsv1.Deployment{} },
		NewList: func() runtime.Object { return &appsv1.DeploymentList{} },
		Strategy: typed[*appsv1.Deployment]{
			prepareCreate:  func(d *appsv1.Deployment) { d.Status = appsv1.DeploymentStatus{} },
			prepareUpdate:  func(d, old *appsv1.Deployment) { d.Status = old.Status },
			defaults:       defaultDeployment,
			validate:       validateDeployment,
			validateUpdate: validateDeploymentUpdate,
		},
		Status: typedStatus[*appsv1.Deployment]{
			prepareUpdate: func(d, old *appsv1.Deployment) {
				d.Spec = old.Spec
				// Like Kubernetes, a deployment's status update may change its
				// annotations: the deployment controller writes its revision
				// annotation with UpdateStatus.
				ann := d.Annotations
				resetMetaForStatus(&d.ObjectMeta, &old.ObjectMeta)
				d.Annotations = ann
			},
			validateUpdate: validateDeploymentStatusUpdate,
		},
		Scale: replicasScale[*appsv1.Deployment]{
			get: func(d *appsv1.Deployment) (*int32, int32, string, error) {
				sel, err := selectorString(d.Spec.Selector)
				return d.Spec.Replicas, d.Status.Replicas, sel, err
			},
			set: func(d *appsv1.Deployment, n int32) { d.Spec.Replicas = &n },
		},
		Attrs: attrsFor[*appsv1.Deployment](true, nil),
		Table: printers.For("apps", "Deployment"),
	}
}

func defaultDeployment(d *appsv1.Deployment) {
	s := &d.Spec
	if s.Replicas == nil {
		s.Replicas = new(int32(1))
	}
	if s.Strategy.Type == "" {
		s.Strategy.Type = appsv1.RollingUpdateDeploymentStrategyType
	}
	if s.Strategy.Type == appsv1.RollingUpdateDeploymentStrategyType {
		if s.Strategy.RollingUpdate == nil {
			s.Strategy.RollingUpdate = &appsv1.RollingUpdateDeployment{}
		}
		ru := s.Strategy.RollingUpdate
		if ru.MaxUnavailable == nil {
			ru.MaxUnavailable = new(intstr.FromString("25%"))
		}
		if ru.MaxSurge == nil {
			ru.MaxSurge = new(intstr.FromString("25%"))
		}
	}
	if s.RevisionHistoryLimit == nil {
		s.RevisionHistoryLimit = new(int32(10))
	}
	if s.ProgressDeadlineSeconds == nil {
		s.ProgressDeadlineSeconds = new(int32(600))
	}
	defaultPodSpec(&s.Template.Spec)
}

func validateDeployment(d *appsv1.Deployment) field.ErrorList {
	errs := validateMeta(&d.ObjectMeta, true, apivalidation.NameIsDNSSubdomain)
	return append(errs, validateDeploymentSpec(&d.Spec)...)
}

func validateDeploymentSpec(s *appsv1.DeploymentSpec) field.ErrorList {
	errs := validateNonNegative(specPath.Child("replicas"), s.Replicas)
	errs = append(errs, validateSelectorAndTemplate(s.Selector, &s.Template, "deployment", specPath)...)
	errs = append(errs, validateDeploymentStrategy(&s.Strategy, specPath.Child("strategy"))...)
	errs = append(errs, apivalidation.ValidateNonnegativeField(int64(s.MinReadySeconds), specPath.Child("minReadySeconds"))...)
	errs = append(errs, validateNonNegative(specPath.Child("revisionHistoryLimit"), s.RevisionHistoryLimit)...)
	if pd := s.ProgressDeadlineSeconds; pd != nil {
		errs = append(errs, validateNonNegative(specPath.Child("progressDeadlineSeconds"), pd)...)
		if *pd <= s.MinReadySeconds {
			errs = append(errs, field.Invalid(specPath.Child("progressDeadlineSeconds"), *pd, "must be greater than minReadySeconds"))
		}
	}
	return errs
}

func validateDeploymentStrategy(s *appsv1.DeploymentStrategy, p *field.Path) field.ErrorList {
	switch s.Type {
	case appsv1.RecreateDeploymentStrategyType:
		if s.RollingUpdate != nil {
			return field.ErrorList{field.Forbidden(p.Child("rollingUpdate"), "may not be specified when strategy `type` is 'Recreate'")}
		}
		return nil
	case appsv1.RollingUpdateDeploymentStrategyType:
		if s.RollingUpdate == nil {
			return field.ErrorList{field.Required(p.Child("rollingUpdate"), "this should be defaulted and never be nil")}
		}
		rp := p.Child("rollingUpdate")
		ru := s.RollingUpdate
		errs := validateIntOrPercent(ru.MaxUnavailable, rp.Child("maxUnavailable"))
		errs = append(errs, validateIntOrPercent(ru.MaxSurge, rp.Child("maxSurge"))...)
		if intOrPercentValue(ru.MaxUnavailable) == 0 && intOrPercentValue(ru.MaxSurge) == 0 {
			errs = append(errs, field.Invalid(rp.Child("maxUnavailable"), ru.MaxUnavailable, "may not be 0 when `maxSurge` is 0"))
		}
		if v := ru.MaxUnavailable; v != nil && v.Type == intstr.String && intOrPercentValue(v) > 100 {
			errs = append(errs, field.Invalid(rp.Child("maxUnavailable"), v, "must not be greater than 100%"))
		}
		return errs
	default:
		return field.ErrorList{field.NotSupported(p.Child("type"), s.Type,
			[]string{string(appsv1.RecreateDeploymentStrategyType), string(appsv1.RollingUpdateDeploymentStrategyType)})}
	}
}

// validateIntOrPercent accepts a non-negative integer or a percentage
// such as "25%" (nil means unset and is accepted).
func validateIntOrPercent(v *intstr.IntOrString, p *field.Path) field.ErrorList {
	if v == nil {
		return nil
	}
	var errs field.ErrorList
	switch v.Type {
	case intstr.String:
		for _, msg := range validation.IsValidPercent(v.StrVal) {
			errs = append(errs, field.Invalid(p, v, msg))
		}
	case intstr.Int:
		errs = append(errs, apivalidation.ValidateNonnegativeField(int64(v.IntVal), p)...)
	default:
		errs = append(errs, field.Invalid(p, v, "must be an integer or percentage (e.g '5%')"))
	}
	return errs
}

// intOrPercentValue is the number of an int-or-percent (the percent as a
// number), or -1 when it is not a valid one.
func intOrPercentValue(v *intstr.IntOrString) int {
	switch {
	case v == nil:
		return 0
	case v.Type == intstr.Int:
		return int(v.IntVal)
	}
	n, err := strconv.Atoi(strings.TrimSuffix(v.StrVal, "%"))
	if err != nil {
		return -1
	}
	return n
}

// validateDeploymentUpdate also makes spec.selector immutable, as apps/v1
// does.
func validateDeploymentUpdate(d, old *appsv1.Deployment) field.ErrorList {
	errs := validateMetaUpdate(&d.ObjectMeta, &old.ObjectMeta)
	errs = append(errs, validateDeploymentSpec(&d.Spec)...)
	return append(errs, apivalidation.ValidateImmutableField(d.Spec.Selector, old.Spec.Selector, specPath.Child("selector"))...)
}

func validateDeploymentStatusUpdate(d, old *appsv1.Deployment) field.ErrorList {
	errs := validateMetaUpdate(&d.ObjectMeta, &old.ObjectMeta)
	s := &d.Status
	sp := field.NewPath("status")
	errs = append(errs, replicaCounts{
		replicas: s.Replicas, ready: s.ReadyReplicas, available: s.AvailableReplicas,
		others: map[string]int32{"updatedReplicas": s.UpdatedReplicas, "unavailableReplicas": s.UnavailableReplicas},
	}.validate(sp)...)
	errs = append(errs, apivalidation.ValidateNonnegativeField(s.ObservedGeneration, sp.Child("observedGeneration"))...)
	errs = append(errs, validateNonNegative(sp.Child("collisionCount"), s.CollisionCount)...)
	errs = append(errs, validateNonNegative(sp.Child("terminatingReplicas"), s.TerminatingReplicas)...)
	if s.CollisionCount != nil && old.Status.CollisionCount != nil && *s.CollisionCount < *old.Status.CollisionCount {
		errs = append(errs, field.Invalid(sp.Child("collisionCount"), *s.CollisionCount, "cannot be decremented"))
	}
	if s.UpdatedReplicas > s.Replicas {
		errs = append(errs, field.Invalid(sp.Child("updatedReplicas"), s.UpdatedReplicas, "cannot be greater than status.replicas"))
	}
	return errs
}
