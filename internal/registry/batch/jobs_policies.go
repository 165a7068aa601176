package batch

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

const (
	maxPodFailurePolicyRules            = 20
	maxPodFailurePolicyExitCodes        = 255
	maxPodFailurePolicyConditions       = 20
	maxSuccessPolicyRules               = 20
	maxSuccessPolicySucceededIndexesLen = 64 * 1024
)

// The values kube-apiserver lists in its messages, sorted as it sorts
// them.
var (
	podFailurePolicyActions = []string{string(batchv1.PodFailurePolicyActionCount), string(batchv1.PodFailurePolicyActionFailIndex),
		string(batchv1.PodFailurePolicyActionFailJob), string(batchv1.PodFailurePolicyActionIgnore)}
	exitCodeOperators = []string{string(batchv1.PodFailurePolicyOnExitCodesOpIn), string(batchv1.PodFailurePolicyOnExitCodesOpNotIn)}
	conditionStatuses = []string{string(corev1.ConditionFalse), string(corev1.ConditionTrue), string(corev1.ConditionUnknown)}
)

func validatePodFailurePolicy(s *batchv1.JobSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	rp := p.Child("rules")
	if n := len(s.PodFailurePolicy.Rules); n > maxPodFailurePolicyRules {
		errs = append(errs, field.TooMany(rp, n, maxPodFailurePolicyRules))
	}
	names := sets.New[string]()
	for _, c := range s.Template.Spec.Containers {
		names.Insert(c.Name)
	}
	for _, c := range s.Template.Spec.InitContainers {
		names.Insert(c.Name)
	}
	for i := range s.PodFailurePolicy.Rules {
		errs = append(errs, validatePodFailurePolicyRule(s, &s.PodFailurePolicy.Rules[i], rp.Index(i), names)...)
	}
	return errs
}

func validatePodFailurePolicyRule(s *batchv1.JobSpec, r *batchv1.PodFailurePolicyRule, p *field.Path, names sets.Set[string]) field.ErrorList {
	var errs field.ErrorList
	ap := p.Child("action")
	switch {
	case r.Action == "":
		errs = append(errs, field.Required(ap, fmt.Sprintf("valid values: %q", podFailurePolicyActions)))
	case r.Action == batchv1.PodFailurePolicyActionFailIndex:
		if s.BackoffLimitPerIndex == nil {
			errs = append(errs, field.Invalid(ap, r.Action, "requires the backoffLimitPerIndex to be set"))
		}
	case !slices.Contains(podFailurePolicyActions, string(r.Action)):
		errs = append(errs, field.NotSupported(ap, r.Action, podFailurePolicyActions))
	}
	if r.OnExitCodes != nil {
		errs = append(errs, validateOnExitCodes(r.OnExitCodes, p.Child("onExitCodes"), names)...)
	}
	if len(r.OnPodConditions) > 0 {
		errs = append(errs, validateOnPodConditions(r.OnPodConditions, p.Child("onPodConditions"))...)
	}
	if r.OnExitCodes != nil && len(r.OnPodConditions) > 0 {
		errs = append(errs, field.Invalid(p, field.OmitValueType{}, "specifying both OnExitCodes and OnPodConditions is not supported"))
	}
	if r.OnExitCodes == nil && len(r.OnPodConditions) == 0 {
		errs = append(errs, field.Invalid(p, field.OmitValueType{}, "specifying one of OnExitCodes and OnPodConditions is required"))
	}
	return errs
}

func validateOnPodConditions(conds []batchv1.PodFailurePolicyOnPodConditionsPattern, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(conds) > maxPodFailurePolicyConditions {
		errs = append(errs, field.TooMany(p, len(conds), maxPodFailurePolicyConditions))
	}
	for i, c := range conds {
		cp := p.Index(i)
		for _, msg := range validation.IsQualifiedName(string(c.Type)) {
			errs = append(errs, field.Invalid(cp.Child("type"), string(c.Type), msg))
		}
		sp := cp.Child("status")
		switch {
		case c.Status == "":
			errs = append(errs, field.Required(sp, fmt.Sprintf("valid values: %q", conditionStatuses)))
		case !slices.Contains(conditionStatuses, string(c.Status)):
			errs = append(errs, field.NotSupported(sp, c.Status, conditionStatuses))
		}
	}
	return errs
}

func validateOnExitCodes(r *batchv1.PodFailurePolicyOnExitCodesRequirement, p *field.Path, names sets.Set[string]) field.ErrorList {
	var errs field.ErrorList
	op := p.Child("operator")
	switch {
	case r.Operator == "":
		errs = append(errs, field.Required(op, fmt.Sprintf("valid values: %q", exitCodeOperators)))
	case !slices.Contains(exitCodeOperators, string(r.Operator)):
		errs = append(errs, field.NotSupported(op, r.Operator, exitCodeOperators))
	}
	if r.ContainerName != nil && !names.Has(*r.ContainerName) {
		errs = append(errs, field.Invalid(p.Child("containerName"), *r.ContainerName,
			"must be one of the container or initContainer names in the pod template"))
	}
	vp := p.Child("values")
	if len(r.Values) == 0 {
		errs = append(errs, field.Invalid(vp, r.Values, "at least one value is required"))
	} else if len(r.Values) > maxPodFailurePolicyExitCodes {
		errs = append(errs, field.TooMany(vp, len(r.Values), maxPodFailurePolicyExitCodes))
	}
	ordered, seen := true, sets.New[int32]()
	for i, v := range r.Values {
		if r.Operator == batchv1.PodFailurePolicyOnExitCodesOpIn && v == 0 {
			errs = append(errs, field.Invalid(vp.Index(i), v, "must not be 0 for the In operator"))
		}
		if seen.Has(v) {
			errs = append(errs, field.Duplicate(vp.Index(i), v))
		}
		seen.Insert(v)
		if i > 0 && r.Values[i-1] > v {
			ordered = false
		}
	}
	if !ordered {
		errs = append(errs, field.Invalid(vp, r.Values, "must be ordered"))
	}
	return errs
}

func validateSuccessPolicy(s *batchv1.JobSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	rp := p.Child("rules")
	rules := s.SuccessPolicy.Rules
	if len(rules) == 0 {
		errs = append(errs, field.Required(rp, "at least one rules must be specified when the successPolicy is specified"))
	}
	if len(rules) > maxSuccessPolicyRules {
		errs = append(errs, field.TooMany(rp, len(rules), maxSuccessPolicyRules))
	}
	completions := int32(0)
	if s.Completions != nil {
		completions = *s.Completions
	}
	for i := range rules {
		errs = append(errs, validateSuccessPolicyRule(&rules[i], completions, rp.Index(i))...)
	}
	return errs
}

func validateSuccessPolicyRule(r *batchv1.SuccessPolicyRule, completions int32, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if r.SucceededCount == nil && r.SucceededIndexes == nil {
		errs = append(errs, field.Required(p, "at least one of succeededCount or succeededIndexes must be specified"))
	}
	var total int32
	if r.SucceededIndexes != nil {
		ip := p.Child("succeededIndexes")
		if len(*r.SucceededIndexes) > maxSuccessPolicySucceededIndexesLen {
			errs = append(errs, field.TooLong(ip, "", maxSuccessPolicySucceededIndexesLen))
		}
		var err error
		if total, err = parseIndexes(*r.SucceededIndexes, completions); err != nil {
			errs = append(errs, field.Invalid(ip, *r.SucceededIndexes, fmt.Sprintf("error parsing succeededIndexes: %s", err.Error())))
		}
	}
	if n := r.SucceededCount; n != nil {
		cp := p.Child("succeededCount")
		errs = append(errs, apivalidation.ValidateNonnegativeField(int64(*n), cp)...)
		if *n > completions {
			errs = append(errs, field.Invalid(cp, *n, fmt.Sprintf("must be less than or equal to %d (the number of specified completions)", completions)))
		}
		if r.SucceededIndexes != nil && *n > total {
			errs = append(errs, field.Invalid(cp, *n, fmt.Sprintf("must be less than or equal to %d (the number of indexes in the specified succeededIndexes field)", total)))
		}
	}
	return errs
}

// internalSuccessPolicy renders a success policy as kube-apiserver's
// internal type is rendered in messages (Go field names).
func internalSuccessPolicy(sp *batchv1.SuccessPolicy) any {
	type rule struct {
		SucceededIndexes *string
		SucceededCount   *int32
	}
	out := struct{ Rules []rule }{Rules: []rule{}}
	if sp.Rules == nil {
		out.Rules = nil
	}
	for _, r := range sp.Rules {
		out.Rules = append(out.Rules, rule{r.SucceededIndexes, r.SucceededCount})
	}
	return out
}

// parseIndexes checks an index list such as "1,3-5,7" against
// completions and returns how many indexes it names.
func parseIndexes(s string, completions int32) (int32, error) {
	if s == "" {
		return 0, nil
	}
	var last *int32
	var total int32
	for _, part := range strings.Split(s, ",") {
		x, y, err := parseInterval(part, completions)
		if err != nil {
			return 0, err
		}
		if last != nil && *last >= x {
			return 0, fmt.Errorf("non-increasing order, previous: %d, current: %d", *last, x)
		}
		total += y - x + 1
		last = &y
	}
	return total, nil
}

func parseInterval(s string, completions int32) (int32, int32, error) {
	limits := strings.Split(s, "-")
	if len(limits) > 2 {
		return 0, 0, fmt.Errorf("the fragment %q violates the requirement that an index interval can have at most two parts separated by '-'", s)
	}
	x, err := strconv.Atoi(limits[0])
	if err != nil {
		return 0, 0, fmt.Errorf("cannot convert string to integer for index: %q", limits[0])
	}
	if x >= int(completions) {
		return 0, 0, fmt.Errorf("too large index: %q", limits[0])
	}
	if len(limits) == 1 {
		return int32(x), int32(x), nil
	}
	y, err := strconv.Atoi(limits[1])
	if err != nil {
		return 0, 0, fmt.Errorf("cannot convert string to integer for index: %q", limits[1])
	}
	if y >= int(completions) {
		return 0, 0, fmt.Errorf("too large index: %q", limits[1])
	}
	if x >= y {
		return 0, 0, fmt.Errorf("non-increasing order, previous: %d, current: %d", x, y)
	}
	return int32(x), int32(y), nil
}
