package dra

import (
	"fmt"
	"strings"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

// The device requests of claims and claim templates.

// defaultClaimSpec: allocation mode ExactCount with count 1 by default, for
// requests and their alternatives.
func defaultClaimSpec(s *resourcev1.ResourceClaimSpec) {
	for i := range s.Devices.Requests {
		r := &s.Devices.Requests[i]
		if e := r.Exactly; e != nil {
			defaultAllocation(&e.AllocationMode, &e.Count)
		}
		for j := range r.FirstAvailable {
			defaultAllocation(&r.FirstAvailable[j].AllocationMode, &r.FirstAvailable[j].Count)
		}
	}
}

func defaultAllocation(mode *resourcev1.DeviceAllocationMode, count *int64) {
	if *mode == "" {
		*mode = resourcev1.DeviceAllocationModeExactCount
	}
	if *mode == resourcev1.DeviceAllocationModeExactCount && *count == 0 {
		*count = 1
	}
}

// dropDisabledClaimFields drops what alpha features of v1.37 (off by
// default) would add: derived attributes.
func dropDisabledClaimFields(s, old *resourcev1.ResourceClaimSpec) {
	if old != nil && usesDerivedAttributes(old) {
		return
	}
	for i := range s.Devices.Requests {
		r := &s.Devices.Requests[i]
		if r.Exactly != nil {
			r.Exactly.DerivedAttributes = nil
		}
		for j := range r.FirstAvailable {
			r.FirstAvailable[j].DerivedAttributes = nil
		}
	}
}

func usesDerivedAttributes(s *resourcev1.ResourceClaimSpec) bool {
	for _, r := range s.Devices.Requests {
		if r.Exactly != nil && len(r.Exactly.DerivedAttributes) > 0 {
			return true
		}
		for _, sub := range r.FirstAvailable {
			if len(sub.DerivedAttributes) > 0 {
				return true
			}
		}
	}
	return false
}

// requestNames maps each request to the names of its alternatives (nil
// for a request without).
type requestNames map[string]sets.Set[string]

func gatherRequestNames(d *resourcev1.DeviceClaim) requestNames {
	out := requestNames{}
	for _, r := range d.Requests {
		if len(r.FirstAvailable) == 0 {
			out[r.Name] = nil
			continue
		}
		subs := sets.New[string]()
		for _, s := range r.FirstAvailable {
			subs.Insert(s.Name)
		}
		out[r.Name] = subs
	}
	return out
}

// has reports whether name is "request" or "request/alternative" of the
// claim.
func (r requestNames) has(name string) bool {
	segs := strings.Split(name, "/")
	if len(segs) > 2 {
		return false
	}
	subs, ok := r[segs[0]]
	if !ok {
		return false
	}
	return len(segs) == 1 || subs.Has(segs[1])
}

func validateClaimSpec(p *field.Path, s *resourcev1.ResourceClaimSpec, sel *selectorCompiler) field.ErrorList {
	d, dp := &s.Devices, p.Child("devices")
	names := gatherRequestNames(d)
	errs := validateSet(dp.Child("requests"), d.Requests, resourcev1.DeviceRequestsMaxSize,
		func(p *field.Path, r *resourcev1.DeviceRequest) field.ErrorList { return validateRequest(p, r, sel) },
		func(r *resourcev1.DeviceRequest) string { return r.Name }, listOpts{true, true})
	errs = append(errs, validateList(dp.Child("constraints"), d.Constraints, resourcev1.DeviceConstraintsMaxSize,
		func(p *field.Path, c *resourcev1.DeviceConstraint) field.ErrorList {
			return validateConstraint(p, c, names)
		}, listOpts{sizeCovered: true})...)
	return append(errs, validateList(dp.Child("config"), d.Config, resourcev1.DeviceConfigMaxSize,
		func(p *field.Path, c *resourcev1.DeviceClaimConfiguration) field.ErrorList {
			errs := validateRequestRefs(p.Child("requests"), c.Requests, names)
			return append(errs, validateOpaque(p, &c.DeviceConfiguration, false)...)
		}, listOpts{sizeCovered: true})...)
}

func validateRequest(p *field.Path, r *resourcev1.DeviceRequest, sel *selectorCompiler) field.ErrorList {
	errs := strategy.Check(p.Child("name"), r.Name, validation.IsDNS1123Label)
	switch n := len(r.FirstAvailable); {
	case n == 0 && r.Exactly == nil:
		errs = append(errs, field.Required(p, "exactly one of `exactly` or `firstAvailable` is required"))
	case n > 0 && r.Exactly != nil:
		errs = append(errs, field.Invalid(p, nil, "exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set"))
	case n > 0:
		errs = append(errs, validateSet(p.Child("firstAvailable"), r.FirstAvailable, resourcev1.FirstAvailableDeviceRequestMaxSize,
			func(p *field.Path, s *resourcev1.DeviceSubRequest) field.ErrorList {
				errs := strategy.Check(p.Child("name"), s.Name, validation.IsDNS1123Label)
				return append(errs, validateDeviceRequest(p, s.DeviceClassName, s.Selectors, s.AllocationMode, s.Count, s.Tolerations, sel, true)...)
			},
			func(s *resourcev1.DeviceSubRequest) string { return s.Name }, listOpts{true, true})...)
	default:
		e := r.Exactly
		errs = append(errs, validateDeviceRequest(p.Child("exactly"), e.DeviceClassName, e.Selectors, e.AllocationMode, e.Count, e.Tolerations, sel, false)...)
	}
	return errs
}

// validateDeviceRequest checks what exact requests and alternatives share:
// a device class (checked declaratively for alternatives), selectors, the
// allocation mode and count, tolerations.
func validateDeviceRequest(p *field.Path, class string, selectors []resourcev1.DeviceSelector, mode resourcev1.DeviceAllocationMode,
	count int64, tolerations []resourcev1.DeviceToleration, sel *selectorCompiler, alternative bool) field.ErrorList {
	var errs field.ErrorList
	if class == "" {
		errs = append(errs, field.Required(p.Child("deviceClassName"), ""))
	} else {
		errs = append(errs, strategy.Check(p.Child("deviceClassName"), class, validation.IsDNS1123Subdomain)...)
	}
	if alternative {
		errs = covered(errs)
	}
	errs = append(errs, validateSelectors(p.Child("selectors"), selectors, sel, false)...)
	switch mode {
	case resourcev1.DeviceAllocationModeAll:
		if count != 0 {
			errs = append(errs, field.Invalid(p.Child("count"), count, fmt.Sprintf("must not be specified when allocationMode is '%s'", mode)))
		}
	case resourcev1.DeviceAllocationModeExactCount:
		if count <= 0 {
			errs = append(errs, field.Invalid(p.Child("count"), count, "must be greater than zero"))
		}
	default:
		errs = append(errs, field.NotSupported(p.Child("allocationMode"), mode, []string{"All", "ExactCount"}).MarkCoveredByDeclarative())
	}
	for i := range tolerations {
		errs = append(errs, validateToleration(p.Child("tolerations").Index(i), &tolerations[i])...)
	}
	return errs
}

// validateSelectors checks each selector has a CEL expression that
// compiles (not checked again when stored).
func validateSelectors(p *field.Path, selectors []resourcev1.DeviceSelector, sel *selectorCompiler, stored bool) field.ErrorList {
	return validateList(p, selectors, resourcev1.DeviceSelectorsMaxSize, func(p *field.Path, s *resourcev1.DeviceSelector) field.ErrorList {
		if s.CEL == nil {
			return field.ErrorList{field.Required(p.Child("cel"), "")}
		}
		if stored {
			return nil
		}
		return sel.validate(p.Child("cel", "expression"), s.CEL.Expression)
	}, listOpts{sizeCovered: true})
}

func validateConstraint(p *field.Path, c *resourcev1.DeviceConstraint, names requestNames) field.ErrorList {
	errs := validateRequestRefs(p.Child("requests"), c.Requests, names)
	switch {
	case c.MatchAttribute != nil:
		errs = append(errs, covered(fullyQualifiedName(p.Child("matchAttribute"), string(*c.MatchAttribute)))...)
	case c.DistinctAttribute != nil:
		errs = append(errs, covered(fullyQualifiedName(p.Child("distinctAttribute"), string(*c.DistinctAttribute)))...)
	default:
		errs = append(errs, field.Required(p, `exactly one of "matchAttribute" or "distinctAttribute" is required, but multiple fields are set`))
	}
	return errs
}

// validateRequestRefs checks names of requests ("request" or
// "request/alternative") of the claim, each once.
func validateRequestRefs(p *field.Path, refs []string, names requestNames) field.ErrorList {
	const msg = "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'"
	return validateSet(p, refs, resourcev1.DeviceRequestsMaxSize, func(p *field.Path, name *string) field.ErrorList {
		segs := strings.Split(*name, "/")
		if len(segs) > 2 {
			return field.ErrorList{field.Invalid(p, *name, msg)}
		}
		var errs field.ErrorList
		for _, s := range segs {
			errs = append(errs, strategy.Check(p, s, validation.IsDNS1123Label)...)
		}
		if !names.has(*name) {
			errs = append(errs, field.Invalid(p, *name, msg))
		}
		return errs
	}, func(name *string) string { return *name }, listOpts{true, true})
}
