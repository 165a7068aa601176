package dra

import (
	"fmt"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

func validateSliceSpec(s, old *resourcev1.ResourceSliceSpec) field.ErrorList {
	p := strategy.SpecPath
	errs := driverName(p.Child("driver"), s.Driver)
	pp := p.Child("pool")
	errs = append(errs, poolName(pp.Child("name"), s.Pool.Name)...)
	if s.Pool.ResourceSliceCount <= 0 {
		errs = append(errs, field.Invalid(pp.Child("resourceSliceCount"), s.Pool.ResourceSliceCount, "must be greater than zero"))
	}
	if s.Pool.Generation < 0 {
		errs = append(errs, field.Invalid(pp.Child("generation"), s.Pool.Generation, "must be greater than or equal to zero"))
	}
	if old != nil {
		errs = append(errs, apivalidation.ValidateImmutableField(s.Pool.Name, old.Pool.Name, pp.Child("name"))...)
		errs = append(errs, apivalidation.ValidateImmutableField(s.Driver, old.Driver, p.Child("driver"))...)
		errs = append(errs, apivalidation.ValidateImmutableField(s.NodeName, old.NodeName, p.Child("nodeName"))...)
	}
	errs = append(errs, validateNodeChoice(p, s)...)
	if s.SharedCounters != nil && s.Devices != nil {
		errs = append(errs, field.Invalid(p, "", "only one of `sharedCounters` or `devices` is allowed"))
	}
	maxDevices := resourcev1.ResourceSliceMaxDevices
	if sliceUsesAdvancedFeatures(s) {
		maxDevices = resourcev1.ResourceSliceMaxDevicesWithAdvancedFeatures
	}
	errs = append(errs, validateSet(p.Child("devices"), s.Devices, maxDevices, func(dp *field.Path, d *resourcev1.Device) field.ErrorList {
		return validateDevice(dp, d, lookupDevice(old, d.Name), s.PerDeviceNodeSelection)
	}, func(d *resourcev1.Device) string { return d.Name }, listOpts{})...)
	return append(errs, validateSet(p.Child("sharedCounters"), s.SharedCounters, resourcev1.ResourceSliceMaxCounterSets,
		func(p *field.Path, c *resourcev1.CounterSet) field.ErrorList {
			var errs field.ErrorList
			if c.Name == "" {
				errs = append(errs, field.Required(p.Child("name"), ""))
			} else {
				errs = append(errs, strategy.Check(p.Child("name"), c.Name, validation.IsDNS1123Label)...)
			}
			if len(c.Counters) == 0 {
				errs = append(errs, field.Required(p.Child("counters"), ""))
			} else if len(c.Counters) > resourcev1.ResourceSliceMaxCountersPerCounterSet {
				return append(errs, field.TooMany(p.Child("counters"), len(c.Counters), resourcev1.ResourceSliceMaxCountersPerCounterSet))
			} else {
				for _, k := range sets.List(sets.KeySet(c.Counters)) {
					errs = append(errs, covered(strategy.Check(p.Child("counters"), k, validation.IsDNS1123Label))...)
				}
			}
			return covered(errs)
		}, func(c *resourcev1.CounterSet) string { return c.Name }, listOpts{true, true})...)
}

// validateNodeChoice: exactly one of nodeName (not empty), nodeSelector
// (one term), allNodes (true) and perDeviceNodeSelection (true).
func validateNodeChoice(p *field.Path, s *resourcev1.ResourceSliceSpec) field.ErrorList {
	var errs field.ErrorList
	var set []string
	if n := s.NodeName; n != nil {
		if *n != "" {
			set = append(set, "`nodeName`")
			errs = append(errs, strategy.Check(p.Child("nodeName"), *n, validation.IsDNS1123Subdomain)...)
		} else {
			errs = append(errs, field.Invalid(p.Child("nodeName"), *n, "must be either unset or set to a non-empty string"))
		}
	}
	if ns := s.NodeSelector; ns != nil {
		set = append(set, "`nodeSelector`")
		errs = append(errs, strategy.ValidateNodeSelector(ns, p.Child("nodeSelector"))...)
		if len(ns.NodeSelectorTerms) != 1 {
			errs = append(errs, field.Invalid(p.Child("nodeSelector", "nodeSelectorTerms"), internalTerms(ns.NodeSelectorTerms), "must have exactly one node selector term"))
		}
	}
	for _, f := range []struct {
		name, label string
		v           *bool
	}{{"allNodes", "`allNodes`", s.AllNodes}, {"perDeviceNodeSelection", "`perDeviceNodeSelection`", s.PerDeviceNodeSelection}} {
		if f.v == nil {
			continue
		}
		if *f.v {
			set = append(set, f.label)
		} else {
			errs = append(errs, field.Invalid(p.Child(f.name), *f.v, "must be either unset or set to true"))
		}
	}
	const oneOf = "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"
	switch len(set) {
	case 0:
		errs = append(errs, field.Required(p, oneOf))
	case 1:
	default:
		errs = append(errs, field.Invalid(p, fmt.Sprintf("{%s}", strings.Join(set, ", ")), oneOf+", but multiple fields are set"))
	}
	return errs
}

func sliceUsesAdvancedFeatures(s *resourcev1.ResourceSliceSpec) bool {
	for _, d := range s.Devices {
		if len(d.Taints) > 0 || len(d.ConsumesCounters) > 0 {
			return true
		}
		for _, a := range d.Attributes {
			if a.BoolValues != nil || a.IntValues != nil || a.StringValues != nil || a.VersionValues != nil {
				return true
			}
		}
	}
	return false
}

func lookupDevice(s *resourcev1.ResourceSliceSpec, name string) *resourcev1.Device {
	if s == nil {
		return nil
	}
	for i := range s.Devices {
		if s.Devices[i].Name == name {
			return &s.Devices[i]
		}
	}
	return nil
}

func validateDevice(p *field.Path, d, old *resourcev1.Device, perDevice *bool) field.ErrorList {
	errs := strategy.Check(p.Child("name"), d.Name, validation.IsDNS1123Label)
	if n := len(d.Attributes) + len(d.Capacity); n > resourcev1.ResourceSliceMaxAttributesAndCapacitiesPerDevice {
		errs = append(errs, field.Invalid(p, n, fmt.Sprintf("the total number of attributes and capacities must not exceed %d", resourcev1.ResourceSliceMaxAttributesAndCapacitiesPerDevice)))
	}
	for _, k := range sortedKeys(d.Attributes) {
		errs = append(errs, qualifiedName(p.Child("attributes"), string(k))...)
		errs = append(errs, validateAttribute(p.Child("attributes").Key(truncate(string(k))), d.Attributes[k])...)
	}
	if old == nil || !apiequality.Semantic.DeepEqual(old.Capacity, d.Capacity) {
		multi := d.AllowMultipleAllocations != nil && *d.AllowMultipleAllocations
		for _, k := range sortedKeys(d.Capacity) {
			errs = append(errs, qualifiedName(p.Child("capacity"), string(k))...)
			if c := d.Capacity[k]; c.RequestPolicy != nil && !multi {
				errs = append(errs, field.Forbidden(p.Child("capacity").Key(truncate(string(k))).Child("requestPolicy"), "allowMultipleAllocations must be true"))
			}
		}
	}
	if old == nil || !apiequality.Semantic.DeepEqual(old.Taints, d.Taints) {
		errs = append(errs, validateList(p.Child("taints"), d.Taints, resourcev1.DeviceTaintsMaxLength,
			func(p *field.Path, t *resourcev1.DeviceTaint) field.ErrorList { return validateTaint(p, t, nil) }, listOpts{})...)
	}
	errs = append(errs, validateSet(p.Child("consumesCounters"), d.ConsumesCounters, resourcev1.ResourceSliceMaxDeviceCounterConsumptionsPerDevice,
		func(p *field.Path, c *resourcev1.DeviceCounterConsumption) field.ErrorList {
			var errs field.ErrorList
			if c.CounterSet == "" {
				errs = append(errs, field.Required(p.Child("counterSet"), ""))
			} else {
				errs = append(errs, strategy.Check(p.Child("counterSet"), c.CounterSet, validation.IsDNS1123Label)...)
			}
			if len(c.Counters) == 0 {
				errs = append(errs, field.Required(p.Child("counters"), ""))
			}
			return covered(errs)
		}, func(c *resourcev1.DeviceCounterConsumption) string { return c.CounterSet }, listOpts{true, true})...)
	errs = append(errs, validateDeviceNodes(p, d, perDevice)...)
	return append(errs, validateBindingConditions(p, d.BindingConditions, d.BindingFailureConditions)...)
}

func validateDeviceNodes(p *field.Path, d *resourcev1.Device, perDevice *bool) field.ErrorList {
	if perDevice == nil || !*perDevice {
		if d.NodeName != nil || d.NodeSelector != nil || d.AllNodes != nil {
			return field.ErrorList{field.Invalid(p, nil, "`nodeName`, `nodeSelector` and `allNodes` can only be set if `perDeviceNodeSelection` is set to true in the ResourceSlice spec")}
		}
		return nil
	}
	var errs field.ErrorList
	var set []string
	if n := d.NodeName; n != nil {
		if *n != "" {
			set = append(set, "`nodeName`")
			errs = append(errs, strategy.Check(p.Child("nodeName"), *n, validation.IsDNS1123Subdomain)...)
		} else {
			errs = append(errs, field.Invalid(p.Child("nodeName"), *n, "must not be empty"))
		}
	}
	if d.NodeSelector != nil {
		set = append(set, "`nodeSelector`")
		errs = append(errs, strategy.ValidateNodeSelector(d.NodeSelector, p.Child("nodeSelector"))...)
	}
	if a := d.AllNodes; a != nil {
		if *a {
			set = append(set, "`allNodes`")
		} else {
			errs = append(errs, field.Invalid(p.Child("allNodes"), *a, "must be either unset or set to true"))
		}
	}
	const oneOf = "exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when `perDeviceNodeSelection` is set to true in the ResourceSlice spec"
	switch len(set) {
	case 0:
		errs = append(errs, field.Required(p, oneOf))
	case 1:
	default:
		errs = append(errs, field.Invalid(p, fmt.Sprintf("{%s}", strings.Join(set, ", ")), oneOf))
	}
	return errs
}

// semver matches a version as semver.org 2.0.0 defines it.
var semver = regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)` +
	`(-(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(\.(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*)?` +
	`(\+[0-9a-zA-Z-]+(\.[0-9a-zA-Z-]+)*)?$`)

// attributeFields are the members of an attribute's value union, in the
// order kube-apiserver names them.
var attributeFields = "`int`, `bool`, `string`, `version`, `ints`, `bools`, `strings`, `versions`"

// validateAttribute: exactly one value (checked declaratively), strings and
// versions at most 64 characters, versions in semver form.
func validateAttribute(p *field.Path, a resourcev1.DeviceAttribute) field.ErrorList {
	var errs field.ErrorList
	var set []string
	if a.IntValue != nil {
		set = append(set, "int")
	}
	if a.BoolValue != nil {
		set = append(set, "bool")
	}
	if a.StringValue != nil {
		set = append(set, "string")
		if len(*a.StringValue) > resourcev1.DeviceAttributeMaxValueLength {
			errs = append(errs, field.TooLong(p.Child("string"), "", resourcev1.DeviceAttributeMaxValueLength))
		}
	}
	if a.VersionValue != nil {
		set = append(set, "version")
		if !semver.MatchString(*a.VersionValue) {
			errs = append(errs, field.Invalid(p.Child("version"), *a.VersionValue, "must be a string compatible with semver.org spec 2.0.0"))
		}
		if len(*a.VersionValue) > resourcev1.DeviceAttributeMaxValueLength {
			errs = append(errs, field.TooLong(p.Child("version"), "", resourcev1.DeviceAttributeMaxValueLength))
		}
	}
	switch len(set) {
	case 0:
		errs = append(errs, field.Invalid(p, "", "must specify one of: "+attributeFields).MarkCoveredByDeclarative())
	case 1:
	default:
		errs = append(errs, field.Invalid(p, "{"+strings.Join(set, ", ")+"}", "must specify exactly one of: "+attributeFields).MarkCoveredByDeclarative())
	}
	return errs
}

// truncate shortens a map key in a field path as kube-apiserver does
// (keys longer than 96 characters keep their ends around "...").
func truncate(s string) string {
	const max = resourcev1.DeviceMaxDomainLength + 1 + resourcev1.DeviceMaxIDLength
	if len(s) <= max {
		return s
	}
	rest := max - 3
	return s[:(rest+1)/2] + "..." + s[len(s)-rest/2:]
}

func sortedKeys[K ~string, V any](m map[K]V) []K {
	return sets.List(sets.KeySet(m))
}

// nodeSelectorTerm and nodeSelectorRequirement render node selector terms
// in error messages as kube-apiserver does: with the Go field names of
// its internal types.
type nodeSelectorTerm struct {
	MatchExpressions, MatchFields []nodeSelectorRequirement
}

type nodeSelectorRequirement struct {
	Key, Operator string
	Values        []string
}

func internalTerms(terms []corev1.NodeSelectorTerm) []nodeSelectorTerm {
	reqs := func(rs []corev1.NodeSelectorRequirement) []nodeSelectorRequirement {
		if rs == nil {
			return nil
		}
		out := make([]nodeSelectorRequirement, len(rs))
		for i, r := range rs {
			out[i] = nodeSelectorRequirement{Key: r.Key, Operator: string(r.Operator), Values: r.Values}
		}
		return out
	}
	out := make([]nodeSelectorTerm, len(terms))
	for i, t := range terms {
		out[i] = nodeSelectorTerm{MatchExpressions: reqs(t.MatchExpressions), MatchFields: reqs(t.MatchFields)}
	}
	return out
}
