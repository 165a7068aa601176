package dra

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/operation"
	"k8s.io/apimachinery/pkg/api/validate"
	"k8s.io/apimachinery/pkg/api/validate/content"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

// Validators of the names and values the resource.k8s.io kinds share, with
// kube-apiserver's messages.

// driverName checks a driver name: required, at most 63 characters, a DNS
// subdomain in any case.
func driverName(p *field.Path, name string) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	var errs field.ErrorList
	if len(name) > resourcev1.DriverNameMaxLength {
		errs = append(errs, field.TooLong(p, "", resourcev1.DriverNameMaxLength))
	}
	for _, msg := range validation.IsDNS1123Subdomain(strings.ToLower(name)) {
		errs = append(errs, field.Invalid(p, name, msg))
	}
	return errs
}

// coveredDriverName is driverName where kube-apiserver v1.37 checks the
// name declaratively: the same rules, its own message for the format,
// reported after the other errors.
func coveredDriverName(p *field.Path, name string) field.ErrorList {
	if name == "" {
		return covered(field.ErrorList{field.Required(p, "")})
	}
	var errs field.ErrorList
	if len(name) > resourcev1.DriverNameMaxLength {
		errs = append(errs, field.TooLong(p, "", resourcev1.DriverNameMaxLength))
	}
	errs = append(errs, validate.LongNameCaseless(context.Background(), operation.Operation{}, p, &name, nil)...)
	return covered(errs)
}

// covered marks errors kube-apiserver v1.37 reports from its declarative
// validation: they come after all the others (declarativeLast).
func covered(errs field.ErrorList) field.ErrorList {
	return errs.MarkCoveredByDeclarative()
}

// declarativeLast orders errs as kube-apiserver does when declarative
// validation covers some of its rules: the others first, then the covered
// ones, each group in its order.
func declarativeLast(errs field.ErrorList) field.ErrorList {
	out := make(field.ErrorList, 0, len(errs))
	for _, e := range errs {
		if !e.CoveredByDeclarative {
			out = append(out, e)
		}
	}
	for _, e := range errs {
		if e.CoveredByDeclarative {
			out = append(out, e)
		}
	}
	return out
}

// poolName checks a pool name: DNS subdomains separated by slashes.
func poolName(p *field.Path, name string) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	var errs field.ErrorList
	if len(name) > resourcev1.PoolNameMaxLength {
		errs = append(errs, field.TooLong(p, "", resourcev1.PoolNameMaxLength))
	}
	for _, part := range strings.Split(name, "/") {
		errs = append(errs, strategy.Check(p, part, validation.IsDNS1123Subdomain)...)
	}
	return errs
}

// qualifiedName checks an attribute or capacity name: a C identifier,
// optionally prefixed by a driver-like domain and a slash.
func qualifiedName(p *field.Path, name string) field.ErrorList {
	parts := strings.Split(name, "/")
	switch len(parts) {
	case 1:
		return cIdentifier(p, parts[0])
	case 2:
		var errs field.ErrorList
		if parts[0] == "" {
			errs = append(errs, field.Invalid(p, "", "the domain must not be empty"))
		} else {
			errs = append(errs, driverName(p, parts[0])...)
		}
		if parts[1] == "" {
			return append(errs, field.Invalid(p, "", "the name must not be empty"))
		}
		return append(errs, cIdentifier(p, parts[1])...)
	}
	return nil
}

// fullyQualifiedName is a qualifiedName with a domain.
func fullyQualifiedName(p *field.Path, name string) field.ErrorList {
	errs := qualifiedName(p, name)
	if !strings.Contains(name, "/") {
		errs = append(errs, field.Invalid(p, name, "a fully qualified name must be a domain and a name separated by a slash"))
	}
	return errs
}

func cIdentifier(p *field.Path, id string) field.ErrorList {
	var errs field.ErrorList
	if len(id) > resourcev1.DeviceMaxIDLength {
		errs = append(errs, field.TooLong(p, "", resourcev1.DeviceMaxIDLength))
	}
	for _, msg := range content.IsCIdentifier(id) {
		errs = append(errs, field.Invalid(p, id, msg))
	}
	return errs
}

var taintEffects = []string{"NoExecute", "NoSchedule", "None"}

func validEffect(e resourcev1.DeviceTaintEffect) bool {
	return e == resourcev1.DeviceTaintEffectNoSchedule || e == resourcev1.DeviceTaintEffectNoExecute || e == resourcev1.DeviceTaintEffectNone
}

// validateTaint checks a device taint; old, when not nil, is the taint
// before an update (an unchanged effect is not checked again).
func validateTaint(p *field.Path, t *resourcev1.DeviceTaint, old *resourcev1.DeviceTaint) field.ErrorList {
	errs := metav1validation.ValidateLabelName(t.Key, p.Child("key"))
	if t.Value != "" {
		errs = append(errs, strategy.Check(p.Child("value"), t.Value, validation.IsValidLabelValue)...)
	}
	if old == nil || old.Effect != t.Effect {
		switch {
		case t.Effect == "":
			errs = append(errs, field.Required(p.Child("effect"), "").MarkCoveredByDeclarative())
		case !validEffect(t.Effect):
			errs = append(errs, field.NotSupported(p.Child("effect"), t.Effect, taintEffects).MarkCoveredByDeclarative())
		}
	}
	return errs
}

func validateToleration(p *field.Path, t *resourcev1.DeviceToleration) field.ErrorList {
	var errs field.ErrorList
	if t.Key != "" {
		errs = append(errs, covered(metav1validation.ValidateLabelName(t.Key, p.Child("key")))...)
	}
	switch t.Operator {
	case resourcev1.DeviceTolerationOpExists:
		if t.Value != "" {
			errs = append(errs, field.Invalid(p.Child("value"), t.Value, "must be empty for operator `Exists`"))
		}
	case resourcev1.DeviceTolerationOpEqual:
		errs = append(errs, strategy.Check(p.Child("value"), t.Value, validation.IsValidLabelValue)...)
	case "":
		errs = append(errs, field.Required(p.Child("operator"), "").MarkCoveredByDeclarative())
	default:
		errs = append(errs, field.NotSupported(p.Child("operator"), t.Operator, []string{"Equal", "Exists"}).MarkCoveredByDeclarative())
	}
	if t.Effect != "" && !validEffect(t.Effect) {
		errs = append(errs, field.NotSupported(p.Child("effect"), t.Effect, taintEffects).MarkCoveredByDeclarative())
	}
	return errs
}

// validateOpaque checks a configuration: opaque is required, with a driver
// and parameters that are a JSON object of at most 10 KiB (the size is
// not checked again for a stored configuration).
func validateOpaque(p *field.Path, c *resourcev1.DeviceConfiguration, stored bool) field.ErrorList {
	if c.Opaque == nil {
		return field.ErrorList{field.Required(p.Child("opaque"), "")}
	}
	op := p.Child("opaque")
	errs := coveredDriverName(op.Child("driver"), c.Opaque.Driver)
	return append(errs, validateRawObject(op.Child("parameters"), c.Opaque.Parameters, stored, resourcev1.OpaqueParametersMaxLength)...)
}

func validateRawObject(p *field.Path, raw runtime.RawExtension, stored bool, max int) field.ErrorList {
	var v any
	switch {
	case len(raw.Raw) == 0:
		return field.ErrorList{field.Required(p, "")}
	case !stored && len(raw.Raw) > max:
		return field.ErrorList{field.TooLong(p, "", max)}
	}
	if err := json.Unmarshal(raw.Raw, &v); err != nil {
		return field.ErrorList{field.Invalid(p, "<value omitted>", fmt.Sprintf("error parsing data as JSON: %v", err.Error()))}
	}
	if v == nil {
		return field.ErrorList{field.Required(p, "")}
	}
	if _, ok := v.(map[string]any); !ok {
		return field.ErrorList{field.Invalid(p, "<value omitted>", "must be a valid JSON object")}
	}
	return nil
}

// listOpts says which of a list's rules kube-apiserver v1.37 checks
// declaratively (their errors come last): its size, the uniqueness of its
// keys (a duplicate is then reported with the whole item, before the
// items' own errors).
type listOpts struct {
	sizeCovered, uniqueCovered bool
}

// validateList checks a list is at most max long (-1: unbounded) and each
// item with fn.
func validateList[T any](p *field.Path, items []T, max int, fn func(*field.Path, *T) field.ErrorList, o listOpts) field.ErrorList {
	if max >= 0 && len(items) > max {
		err := field.TooMany(p, len(items), max)
		if o.sizeCovered {
			err = err.MarkCoveredByDeclarative()
		}
		return field.ErrorList{err}
	}
	var errs field.ErrorList
	for i := range items {
		errs = append(errs, fn(p.Index(i), &items[i])...)
	}
	return errs
}

// validateSet is validateList where no two items may share a key.
func validateSet[T any, K comparable](p *field.Path, items []T, max int, fn func(*field.Path, *T) field.ErrorList, key func(*T) K, o listOpts) field.ErrorList {
	if max >= 0 && len(items) > max {
		return validateList(p, items, max, fn, o)
	}
	var dups field.ErrorList
	seen := sets.New[K]()
	for i := range items {
		k := key(&items[i])
		switch {
		case !seen.Has(k):
			seen.Insert(k)
		case o.uniqueCovered:
			dups = append(dups, field.Duplicate(p.Index(i), items[i]).MarkCoveredByDeclarative())
		default:
			dups = append(dups, field.Duplicate(p.Index(i), k))
		}
	}
	errs := validateList(p, items, max, fn, o)
	if o.uniqueCovered {
		return append(dups, errs...)
	}
	return append(errs, dups...)
}

// validateBindingConditions: at most 4 of each, label names, no repeats,
// no condition in both lists, and each list only with the other.
func validateBindingConditions(p *field.Path, conds, failures []string) field.ErrorList {
	label := func(p *field.Path, s *string) field.ErrorList { return metav1validation.ValidateLabelName(*s, p) }
	errs := validateList(p.Child("bindingConditions"), conds, resourcev1.BindingConditionsMaxSize, label, listOpts{sizeCovered: true})
	errs = append(errs, validateList(p.Child("bindingFailureConditions"), failures, resourcev1.BindingFailureConditionsMaxSize, label, listOpts{sizeCovered: true})...)
	seen := sets.New[string]()
	for i, c := range conds {
		if seen.Has(c) {
			errs = append(errs, field.Duplicate(p.Child("bindingConditions").Index(i), c))
		}
		seen.Insert(c)
	}
	seenFailures := sets.New[string]()
	for i, c := range failures {
		if seenFailures.Has(c) {
			errs = append(errs, field.Duplicate(p.Child("bindingFailureConditions").Index(i), c))
		}
		seenFailures.Insert(c)
		if seen.Has(c) {
			errs = append(errs, field.Invalid(p.Child("bindingFailureConditions").Index(i), c, "bindingFailureConditions must not overlap with bindingConditions"))
		}
	}
	if len(conds) == 0 && len(failures) > 0 {
		errs = append(errs, field.Invalid(p.Child("bindingConditions"), conds, "bindingConditions are required to use bindingFailureConditions"))
	}
	if len(failures) == 0 && len(conds) > 0 {
		errs = append(errs, field.Invalid(p.Child("bindingFailureConditions"), failures, "bindingFailureConditions are required to use bindingConditions"))
	}
	return errs
}
