package builtin

import (
	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateSelectorAndTemplate checks what deployments and replica sets
// share: a required, valid, non-empty selector that matches the template's
// labels, and a template whose pods restart Always and have no deadline.
// kind names the owner in messages ("deployment", "replicaset").
func validateSelectorAndTemplate(sel *metav1.LabelSelector, t *corev1.PodTemplateSpec, kind string, p *field.Path) field.ErrorList {
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
	if sel == nil {
		// reported above
	} else if selector, err := metav1.LabelSelectorAsSelector(sel); err != nil {
		errs = append(errs, field.Invalid(sp, sel, "invalid label selector"))
	} else if !selector.Empty() && !selector.Matches(labels.Set(t.Labels)) {
		errs = append(errs, field.Invalid(tp.Child("metadata", "labels"), t.Labels, "`selector` does not match template `labels`"))
	}
	errs = append(errs, validatePodTemplate(t, tp)...)
	if t.Spec.RestartPolicy != corev1.RestartPolicyAlways && t.Spec.RestartPolicy != "" {
		errs = append(errs, field.NotSupported(tp.Child("spec", "restartPolicy"), t.Spec.RestartPolicy, []string{string(corev1.RestartPolicyAlways)}))
	}
	if t.Spec.ActiveDeadlineSeconds != nil {
		errs = append(errs, field.Forbidden(tp.Child("spec", "activeDeadlineSeconds"), "activeDeadlineSeconds in "+kind+" is not Supported"))
	}
	return errs
}

// validateNonNegative checks an optional count is not negative.
func validateNonNegative(p *field.Path, v *int32) field.ErrorList {
	if v == nil {
		return nil
	}
	return apivalidation.ValidateNonnegativeField(int64(*v), p)
}

// replicaCounts are the status counters deployments and replica sets
// share, with the invariants Kubernetes checks between them.
type replicaCounts struct {
	replicas, ready, available int32
	// others are further non-negative counters by field name.
	others map[string]int32
}

func (c replicaCounts) validate(p *field.Path) field.ErrorList {
	errs := apivalidation.ValidateNonnegativeField(int64(c.replicas), p.Child("replicas"))
	errs = append(errs, apivalidation.ValidateNonnegativeField(int64(c.ready), p.Child("readyReplicas"))...)
	errs = append(errs, apivalidation.ValidateNonnegativeField(int64(c.available), p.Child("availableReplicas"))...)
	for _, name := range sortedKeys(c.others) {
		errs = append(errs, apivalidation.ValidateNonnegativeField(int64(c.others[name]), p.Child(name))...)
	}
	if c.ready > c.replicas {
		errs = append(errs, field.Invalid(p.Child("readyReplicas"), c.ready, "cannot be greater than status.replicas"))
	}
	if c.available > c.replicas {
		errs = append(errs, field.Invalid(p.Child("availableReplicas"), c.available, "cannot be greater than status.replicas"))
	}
	if c.available > c.ready {
		errs = append(errs, field.Invalid(p.Child("availableReplicas"), c.available, "cannot be greater than readyReplicas"))
	}
	return errs
}

// selectorString renders a label selector as Kubernetes' scale
// subresource does ("" for none, "<invalid>" never: an invalid selector is
// an error).
func selectorString(sel *metav1.LabelSelector) (string, error) {
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return "", err
	}
	return s.String(), nil
}
