package apps

import (
	appsv1 "k8s.io/api/apps/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/printers"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/podspec"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

func deploymentsResource() *registry.Resource {
	return &registry.Resource{
		Group: "apps", Version: "v1", Resource: "deployments", Kind: "Deployment", ListKind: "DeploymentList",
		Singular: "deployment", ShortNames: []string{"deploy"}, Categories: []string{"all"}, Namespaced: true,
		New:     func() runtime.Object { return &appsv1.Deployment{} },
		NewList: func() runtime.Object { return &appsv1.DeploymentList{} },
		Strategy: strategy.Typed[*appsv1.Deployment]{
			PrepareCreate: func(d *appsv1.Deployment) {
				d.Status = appsv1.DeploymentStatus{}
				podspec.DropDisabledTemplateFields(&d.Spec.Template, nil)
			},
			PrepareUpdate: func(d, old *appsv1.Deployment) {
				d.Status = old.Status
				podspec.DropDisabledTemplateFields(&d.Spec.Template, &old.Spec.Template)
			},
			Defaults:       defaultDeployment,
			ValidateNew:    validateDeployment,
			ValidateChange: validateDeploymentUpdate,
			Warn:           deploymentWarnings,
		},
		Status: strategy.TypedStatus[*appsv1.Deployment]{
			PrepareUpdate: func(d, old *appsv1.Deployment) {
				d.Spec = old.Spec
				// Like kube-apiserver, a deployment's status update keeps its
				// metadata changes but labels (the deployment controller
				// writes its revision annotation with UpdateStatus).
				d.Labels = old.Labels
			},
			ValidateChange: validateDeploymentStatusUpdate,
		},
		Scale: strategy.ReplicasScale[*appsv1.Deployment]{
			Get: func(d *appsv1.Deployment) (*int32, int32, string, error) {
				sel, err := strategy.SelectorString(d.Spec.Selector)
				return d.Spec.Replicas, d.Status.Replicas, sel, err
			},
			Set: func(d *appsv1.Deployment, n int32) { d.Spec.Replicas = &n },
		},
		Attrs:           strategy.Attrs[*appsv1.Deployment](true, nil),
		FieldLabelError: strategy.UnknownFieldLabel,
		Table:           printers.For("apps", "Deployment"),
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
	podspec.DefaultPodSpec(&s.Template.Spec)
}

func validateDeployment(d *appsv1.Deployment) field.ErrorList {
	errs := strategy.ValidateMeta(&d.ObjectMeta, true, apivalidation.NameIsDNSSubdomain)
	return append(errs, validateDeploymentSpec(&d.Spec)...)
}

func validateDeploymentSpec(s *appsv1.DeploymentSpec) field.ErrorList {
	errs := strategy.ValidateNonNegative(strategy.SpecPath.Child("replicas"), s.Replicas)
	errs = append(errs, podspec.ValidateSelectorAndTemplate(s.Selector, &s.Template, "deployment", strategy.SpecPath)...)
	errs = append(errs, validateDeploymentStrategy(&s.Strategy, strategy.SpecPath.Child("strategy"))...)
	errs = append(errs, apivalidation.ValidateNonnegativeField(int64(s.MinReadySeconds), strategy.SpecPath.Child("minReadySeconds"))...)
	errs = append(errs, strategy.ValidateNonNegative(strategy.SpecPath.Child("revisionHistoryLimit"), s.RevisionHistoryLimit)...)
	if pd := s.ProgressDeadlineSeconds; pd != nil {
		errs = append(errs, strategy.ValidateNonNegative(strategy.SpecPath.Child("progressDeadlineSeconds"), pd)...)
		if *pd <= s.MinReadySeconds {
			errs = append(errs, field.Invalid(strategy.SpecPath.Child("progressDeadlineSeconds"), *pd, "must be greater than minReadySeconds"))
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
		errs := strategy.ValidateIntOrPercent(ru.MaxUnavailable, rp.Child("maxUnavailable"))
		errs = append(errs, strategy.ValidateIntOrPercent(ru.MaxSurge, rp.Child("maxSurge"))...)
		if strategy.IntOrPercentValue(ru.MaxUnavailable) == 0 && strategy.IntOrPercentValue(ru.MaxSurge) == 0 {
			errs = append(errs, field.Invalid(rp.Child("maxUnavailable"), ru.MaxUnavailable, "may not be 0 when `maxSurge` is 0"))
		}
		if v := ru.MaxUnavailable; v != nil && v.Type == intstr.String && strategy.IntOrPercentValue(v) > 100 {
			errs = append(errs, field.Invalid(rp.Child("maxUnavailable"), v, "must not be greater than 100%"))
		}
		return errs
	default:
		// As kube-apiserver: reported at the strategy, its value in the
		// internal form.
		return field.ErrorList{field.NotSupported(p, strategy.GoNamed{V: internalDeploymentStrategy(s)},
			[]string{string(appsv1.RecreateDeploymentStrategyType), string(appsv1.RollingUpdateDeploymentStrategyType)})}
	}
}

// validateDeploymentUpdate also makes spec.selector immutable, as apps/v1
// does.
func validateDeploymentUpdate(d, old *appsv1.Deployment) field.ErrorList {
	errs := strategy.ValidateMetaUpdate(&d.ObjectMeta, &old.ObjectMeta)
	errs = append(errs, validateDeploymentSpec(&d.Spec)...)
	return append(errs, apivalidation.ValidateImmutableField(d.Spec.Selector, old.Spec.Selector, strategy.SpecPath.Child("selector"))...)
}

// validateDeploymentStatusUpdate checks the counters in kube-apiserver's
// order: each non-negative, then updated, ready and available replicas
// within status.replicas and available within ready; a collision count
// never goes down.
func validateDeploymentStatusUpdate(d, old *appsv1.Deployment) field.ErrorList {
	errs := strategy.ValidateMetaUpdate(&d.ObjectMeta, &old.ObjectMeta)
	s := &d.Status
	sp := field.NewPath("status")
	errs = append(errs, apivalidation.ValidateNonnegativeField(s.ObservedGeneration, sp.Child("observedGeneration"))...)
	for _, c := range []struct {
		name string
		n    int32
	}{{"replicas", s.Replicas}, {"updatedReplicas", s.UpdatedReplicas}, {"readyReplicas", s.ReadyReplicas},
		{"availableReplicas", s.AvailableReplicas}, {"unavailableReplicas", s.UnavailableReplicas}} {
		errs = append(errs, apivalidation.ValidateNonnegativeField(int64(c.n), sp.Child(c.name))...)
	}
	errs = append(errs, strategy.ValidateNonNegative(sp.Child("terminatingReplicas"), s.TerminatingReplicas)...)
	errs = append(errs, strategy.ValidateNonNegative(sp.Child("collisionCount"), s.CollisionCount)...)
	const overReplicas = "cannot be greater than status.replicas"
	if s.UpdatedReplicas > s.Replicas {
		errs = append(errs, field.Invalid(sp.Child("updatedReplicas"), s.UpdatedReplicas, overReplicas))
	}
	if s.ReadyReplicas > s.Replicas {
		errs = append(errs, field.Invalid(sp.Child("readyReplicas"), s.ReadyReplicas, overReplicas))
	}
	if s.AvailableReplicas > s.Replicas {
		errs = append(errs, field.Invalid(sp.Child("availableReplicas"), s.AvailableReplicas, overReplicas))
	}
	if s.AvailableReplicas > s.ReadyReplicas {
		errs = append(errs, field.Invalid(sp.Child("availableReplicas"), s.AvailableReplicas, "cannot be greater than readyReplicas"))
	}
	if s.CollisionCount != nil && old.Status.CollisionCount != nil && *s.CollisionCount < *old.Status.CollisionCount {
		errs = append(errs, field.Invalid(sp.Child("collisionCount"), *s.CollisionCount, "cannot be decremented"))
	}
	return errs
}
