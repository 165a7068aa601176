package podspec

import (
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateSelectorAndTemplate checks what deployments and replica sets
// share: a required, valid, non-empty selector that matches the template's
// labels, and a template whose pods restart Always and have no deadline.
// kind names the owner in messages ("deployment", "replicaset").
func ValidateSelectorAndTemplate(sel *metav1.LabelSelector, t *corev1.PodTemplateSpec, kind string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	sp, tp := p.Child("selector"), p.Child("template")
	if sel == nil {
		errs = append(errs, field.Required(sp, ""))
	} else {
		errs = append(errs, metav1validation.ValidateLabelSelector(sel, metav1validation.LabelSelectorValidationOptions{}, sp)...)
		if len(sel.MatchLabels)+len(sel.MatchExpressions) == 0 {
			errs = append(errs, field.Invalid(sp, sel, "empty selector is invalid for "+kind))
		}
	}
	// As kube-apiserver: a missing selector selects nothing, so the
	// template's labels do not match it either.
	if selector, err := metav1.LabelSelectorAsSelector(sel); err != nil {
		errs = append(errs, field.Invalid(sp, sel, "invalid label selector"))
	} else if !selector.Empty() && !selector.Matches(labels.Set(t.Labels)) {
		errs = append(errs, field.Invalid(tp.Child("metadata", "labels"), t.Labels, "`selector` does not match template `labels`"))
	}
	errs = append(errs, ValidatePodTemplate(t, tp)...)
	if t.Spec.RestartPolicy != corev1.RestartPolicyAlways && t.Spec.RestartPolicy != "" {
		errs = append(errs, field.NotSupported(tp.Child("spec", "restartPolicy"), t.Spec.RestartPolicy, []string{string(corev1.RestartPolicyAlways)}))
	}
	if t.Spec.ActiveDeadlineSeconds != nil {
		errs = append(errs, field.Forbidden(tp.Child("spec", "activeDeadlineSeconds"), "activeDeadlineSeconds in "+kind+" is not Supported"))
	}
	return errs
}

// ReplicaCounts are the status counters deployments and replica sets
// share, with the invariants Kubernetes checks between them.
type ReplicaCounts struct {
	Replicas, Ready, Available int32
	// Others are further non-negative counters by field name.
	Others map[string]int32
}

func (c ReplicaCounts) Validate(p *field.Path) field.ErrorList {
	errs := apivalidation.ValidateNonnegativeField(int64(c.Replicas), p.Child("replicas"))
	errs = append(errs, apivalidation.ValidateNonnegativeField(int64(c.Ready), p.Child("readyReplicas"))...)
	errs = append(errs, apivalidation.ValidateNonnegativeField(int64(c.Available), p.Child("availableReplicas"))...)
	for _, name := range strategy.SortedKeys(c.Others) {
		errs = append(errs, apivalidation.ValidateNonnegativeField(int64(c.Others[name]), p.Child(name))...)
	}
	if c.Ready > c.Replicas {
		errs = append(errs, field.Invalid(p.Child("readyReplicas"), c.Ready, "cannot be greater than status.replicas"))
	}
	if c.Available > c.Replicas {
		errs = append(errs, field.Invalid(p.Child("availableReplicas"), c.Available, "cannot be greater than status.replicas"))
	}
	if c.Available > c.Ready {
		errs = append(errs, field.Invalid(p.Child("availableReplicas"), c.Available, "cannot be greater than readyReplicas"))
	}
	return errs
}
