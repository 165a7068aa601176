package strategy

import (
	"net"
	"slices"
	"strconv"
	"strings"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateName checks an optional name with check (one of apimachinery's
// validation.Is… functions).
func ValidateName(p *field.Path, name string, check func(string) []string) field.ErrorList {
	if name == "" {
		return nil
	}
	return Check(p, name, check)
}

// Check turns the messages of check (one of apimachinery's validation.Is…
// functions) about v into Invalid errors at p, as kube-apiserver reports
// them.
func Check(p *field.Path, v string, check func(string) []string) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range check(v) {
		errs = append(errs, field.Invalid(p, v, msg))
	}
	return errs
}

// ValidateEnum requires v to be set and one of allowed.
func ValidateEnum[T ~string](p *field.Path, v T, allowed ...T) field.ErrorList {
	if v == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	if slices.Contains(allowed, v) {
		return nil
	}
	valid := make([]string, len(allowed))
	for i, a := range allowed {
		valid[i] = string(a)
	}
	return field.ErrorList{field.NotSupported(p, v, valid)}
}

// SortedKeys returns the keys of m in order, so that errors come in a
// stable order.
func SortedKeys[K ~string, V any](m map[K]V) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// ValidateIP checks ip is an IP address.
func ValidateIP(p *field.Path, ip string) field.ErrorList {
	if net.ParseIP(ip) == nil {
		return field.ErrorList{field.Invalid(p, ip, "must be a valid IP address")}
	}
	return nil
}

// ValidateIPList checks each entry is an IP address and none repeats; sub,
// when not empty, names the field of an entry that holds the address.
func ValidateIPList(p *field.Path, ips []string, sub string) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[string]()
	for i, ip := range ips {
		idx := p.Index(i)
		if sub != "" {
			idx = idx.Child(sub)
		}
		if seen.Has(ip) {
			errs = append(errs, field.Duplicate(idx, ip))
		}
		seen.Insert(ip)
		errs = append(errs, ValidateIP(idx, ip)...)
	}
	return errs
}

// IsTrue reports whether an optional bool is set and true.
func IsTrue(b *bool) bool { return b != nil && *b }

// ValidateNonNegative checks an optional count is not negative.
func ValidateNonNegative(p *field.Path, v *int32) field.ErrorList {
	if v == nil {
		return nil
	}
	return apivalidation.ValidateNonnegativeField(int64(*v), p)
}

// ValidateIntOrPercent accepts a non-negative integer or a percentage
// such as "25%" (nil means unset and is accepted).
func ValidateIntOrPercent(v *intstr.IntOrString, p *field.Path) field.ErrorList {
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

// IntOrPercentValue is the number of an int-or-percent (the percent as a
// number), or -1 when it is not a valid one.
func IntOrPercentValue(v *intstr.IntOrString) int {
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

// SelectorString renders a label selector as Kubernetes' scale
// subresource does ("" for none; an invalid selector is an error).
func SelectorString(sel *metav1.LabelSelector) (string, error) {
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return "", err
	}
	return s.String(), nil
}
