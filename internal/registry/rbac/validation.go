package rbac

import (
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/validation/path"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

// validName checks the name of a role or binding: any path segment.
func validName(name string, _ bool) []string { return path.IsValidPathSegmentName(name) }

var rulesPath = field.NewPath("rules")

// checked is the result of a validator: errors in kube-apiserver's order,
// and those its declarative validation reports after all others.
type checked struct {
	errs, tail field.ErrorList
}

func (c checked) all() field.ErrorList { return append(c.errs, c.tail...) }

// validateRules checks the rules of a role; verbs-less rules go to the
// tail when declarative (revalidated) is true, else in place.
func validateRules(rules []rbacv1.PolicyRule, namespaced, declarative bool) checked {
	var c checked
	for i, r := range rules {
		p := rulesPath.Index(i)
		if len(r.Verbs) == 0 {
			err := field.Required(p.Child("verbs"), "")
			if declarative {
				c.tail = append(c.tail, err)
			} else {
				c.errs = append(c.errs, err)
			}
		}
		c.errs = append(c.errs, validateRule(r, namespaced, p)...)
	}
	return c
}

// validateRule checks what a rule applies to: non-resource URLs (cluster
// roles only, alone) or API groups and resources.
func validateRule(r rbacv1.PolicyRule, namespaced bool, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(r.NonResourceURLs) > 0 {
		if namespaced {
			errs = append(errs, field.Invalid(p.Child("nonResourceURLs"), r.NonResourceURLs, "namespaced rules cannot apply to non-resource URLs"))
		}
		if len(r.APIGroups) > 0 || len(r.Resources) > 0 || len(r.ResourceNames) > 0 {
			errs = append(errs, field.Invalid(p.Child("nonResourceURLs"), r.NonResourceURLs, "rules cannot apply to both regular resources and non-resource URLs"))
		}
		return errs
	}
	if len(r.APIGroups) == 0 {
		errs = append(errs, field.Required(p.Child("apiGroups"), "resource rules must supply at least one api group"))
	}
	if len(r.Resources) == 0 {
		errs = append(errs, field.Required(p.Child("resources"), "resource rules must supply at least one resource"))
	}
	return errs
}

// validateAggregationRule checks a cluster role's label selectors.
func validateAggregationRule(a *rbacv1.AggregationRule, allowInvalidValues bool) field.ErrorList {
	if a == nil {
		return nil
	}
	p := field.NewPath("aggregationRule", "clusterRoleSelectors")
	var errs field.ErrorList
	if len(a.ClusterRoleSelectors) == 0 {
		errs = append(errs, field.Required(p, "at least one clusterRoleSelector required if aggregationRule is non-nil"))
	}
	opts := metavalidation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: allowInvalidValues}
	for i := range a.ClusterRoleSelectors {
		sel := &a.ClusterRoleSelectors[i]
		errs = append(errs, metavalidation.ValidateLabelSelector(sel, opts, p.Index(i))...)
		if _, err := metav1.LabelSelectorAsSelector(sel); err != nil {
			// kube-apiserver shows the selector it failed to build: null.
			errs = append(errs, field.Invalid(p.Index(i), nil, "invalid label selector."))
		}
	}
	return errs
}

// hasInvalidLabelValue reports whether a stored cluster role's selectors
// hold label values that are not valid today (an update tolerates them).
func hasInvalidLabelValue(a *rbacv1.AggregationRule) bool {
	if a == nil {
		return false
	}
	for i := range a.ClusterRoleSelectors {
		strict := metavalidation.LabelSelectorValidationOptions{}
		if len(metavalidation.ValidateLabelSelector(&a.ClusterRoleSelectors[i], strict, nil)) > 0 {
			return true
		}
	}
	return false
}

// rulesChanged reports whether an update revalidates rules declaratively.
func rulesChanged(rules, old []rbacv1.PolicyRule) bool {
	return !equality.Semantic.DeepEqual(rules, old)
}

// metaErrors checks the metadata of a new role or binding.
func metaErrors(m *metav1.ObjectMeta, namespaced bool) field.ErrorList {
	return strategy.ValidateMeta(m, namespaced, validName)
}
