package core

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

// validateLimitRangeItem checks the resource names of one item and that
// its quantities are consistent: min ≤ default request ≤ default ≤ max, a
// limit/request ratio of at least 1 and at most max/min, and equal default
// and default request for resources that cannot be overcommitted.
func validateLimitRangeItem(item *corev1.LimitRangeItem, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	keys := sets.New[corev1.ResourceName]()
	names := func(l corev1.ResourceList, child string) {
		for _, k := range strategy.SortedKeys(l) {
			errs = append(errs, limitResourceName(item.Type, k, p.Child(child).Key(string(k)))...)
			keys.Insert(k)
		}
	}
	names(item.Max, "max")
	names(item.Min, "min")
	if item.Type == corev1.LimitTypePod {
		if len(item.Default) > 0 {
			errs = append(errs, field.Forbidden(p.Child("default"), "may not be specified when `type` is 'Pod'"))
		}
		if len(item.DefaultRequest) > 0 {
			errs = append(errs, field.Forbidden(p.Child("defaultRequest"), "may not be specified when `type` is 'Pod'"))
		}
	} else {
		names(item.Default, "default")
		names(item.DefaultRequest, "defaultRequest")
	}
	if item.Type == corev1.LimitTypePersistentVolumeClaim {
		_, hasMin := item.Min[corev1.ResourceStorage]
		_, hasMax := item.Max[corev1.ResourceStorage]
		if !hasMin && !hasMax {
			errs = append(errs, field.Required(p.Child("limits"), "either minimum or maximum storage value is required, but neither was provided"))
		}
	}
	names(item.MaxLimitRequestRatio, "maxLimitRequestRatio")
	defaults, defaultRequests := item.Default, item.DefaultRequest
	if item.Type == corev1.LimitTypePod {
		defaults, defaultRequests = nil, nil
	}
	for _, k := range sets.List(keys) {
		errs = append(errs, validateLimitQuantities(k, item, defaults, defaultRequests, p)...)
	}
	return errs
}

// validateLimitQuantities compares the quantities an item gives resource k.
func validateLimitQuantities(k corev1.ResourceName, item *corev1.LimitRangeItem, defaults, defaultRequests corev1.ResourceList, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	key := string(k)
	minQ, hasMin := item.Min[k]
	maxQ, hasMax := item.Max[k]
	def, hasDef := defaults[k]
	req, hasReq := defaultRequests[k]
	ratio, hasRatio := item.MaxLimitRequestRatio[k]
	invalid := func(child string, v resource.Quantity, format string, args ...any) {
		errs = append(errs, field.Invalid(p.Child(child).Key(key), v, fmt.Sprintf(format, args...)))
	}
	if hasMin && hasMax && minQ.Cmp(maxQ) > 0 {
		invalid("min", minQ, "min value %s is greater than max value %s", minQ.String(), maxQ.String())
	}
	if hasReq && hasMin && minQ.Cmp(req) > 0 {
		invalid("defaultRequest", req, "min value %s is greater than default request value %s", minQ.String(), req.String())
	}
	if hasReq && hasMax && req.Cmp(maxQ) > 0 {
		invalid("defaultRequest", req, "default request value %s is greater than max value %s", req.String(), maxQ.String())
	}
	if hasReq && hasDef && req.Cmp(def) > 0 {
		invalid("defaultRequest", req, "default request value %s is greater than default limit value %s", req.String(), def.String())
	}
	if hasDef && hasMin && minQ.Cmp(def) > 0 {
		invalid("default", minQ, "min value %s is greater than default value %s", minQ.String(), def.String())
	}
	if hasDef && hasMax && def.Cmp(maxQ) > 0 {
		invalid("default", maxQ, "default value %s is greater than max value %s", def.String(), maxQ.String())
	}
	if hasRatio && ratio.Cmp(*resource.NewQuantity(1, resource.DecimalSI)) < 0 {
		invalid("maxLimitRequestRatio", ratio, "ratio %s is less than 1", ratio.String())
	}
	if hasRatio && hasMin && hasMax {
		if r, limit := ratioAndLimit(ratio, minQ, maxQ); r > limit {
			invalid("maxLimitRequestRatio", ratio, "ratio %s is greater than max/min = %f", ratio.String(), limit)
		}
	}
	if !isOvercommitAllowed(k) && hasDef && hasReq && def.Cmp(req) != 0 {
		invalid("defaultRequest", req, "default value %s must equal to defaultRequest value %s in %s", def.String(), req.String(), k)
	}
	return errs
}

// ratioAndLimit returns the ratio and max/min as Kubernetes computes them:
// in milli-units when all three are small enough, else in units.
func ratioAndLimit(ratio, minQ, maxQ resource.Quantity) (float64, float64) {
	r, lo, hi := float64(ratio.Value()), minQ.Value(), maxQ.Value()
	if ratio.Value() < resource.MaxMilliValue && lo < resource.MaxMilliValue && hi < resource.MaxMilliValue {
		r = float64(ratio.MilliValue()) / 1000
		lo, hi = minQ.MilliValue(), maxQ.MilliValue()
	}
	return r, float64(hi) / float64(lo)
}
