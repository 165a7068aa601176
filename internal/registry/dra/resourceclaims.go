package dra

import (
	resourcev1 "k8s.io/api/resource/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/printers"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

func resourceClaimsResource() *registry.Resource {
	type claim = resourcev1.ResourceClaim
	sel := &selectorCompiler{}
	validate := func(c *claim) field.ErrorList {
		errs := strategy.ValidateMeta(&c.ObjectMeta, true, apivalidation.NameIsDNSSubdomain)
		return declarativeLast(append(errs, validateClaimSpec(strategy.SpecPath, &c.Spec, sel)...))
	}
	return &registry.Resource{
		Group: Group, Version: "v1", Resource: "resourceclaims", Kind: "ResourceClaim", ListKind: "ResourceClaimList",
		Singular: "resourceclaim", Namespaced: true, NoGeneration: true,
		ReturnDeletedObject: true, // as kube-apiserver: DELETE answers the deleted object
		New:                 func() runtime.Object { return &claim{} },
		NewList:             func() runtime.Object { return &resourcev1.ResourceClaimList{} },
		Strategy: strategy.Typed[*claim]{
			PrepareCreate: func(c *claim) {
				c.Status = resourcev1.ResourceClaimStatus{}
				dropDisabledClaimFields(&c.Spec, nil)
			},
			PrepareUpdate: func(c, old *claim) {
				c.Status = old.Status
				dropDisabledClaimFields(&c.Spec, &old.Spec)
			},
			Defaults:    func(c *claim) { defaultClaimSpec(&c.Spec) },
			ValidateNew: validate,
			ValidateChange: func(c, old *claim) field.ErrorList {
				errs := strategy.ValidateMeta(&c.ObjectMeta, true, apivalidation.NameIsDNSSubdomain)
				errs = append(errs, strategy.ValidateMetaUpdate(&c.ObjectMeta, &old.ObjectMeta)...)
				if !apiequality.Semantic.DeepEqual(c.Spec, old.Spec) {
					// As kube-apiserver's declarative validation reports it.
					errs = append(errs, field.Invalid(strategy.SpecPath, nil, "field is immutable"))
				}
				return errs
			},
		},
		Status: strategy.TypedStatus[*claim]{
			PrepareUpdate: func(c, old *claim) {
				c.Spec = old.Spec
				strategy.ResetMetaForStatus(&c.ObjectMeta, &old.ObjectMeta)
				dropDisabledClaimStatus(c, old)
			},
			ValidateChange: func(c, old *claim) field.ErrorList {
				errs := strategy.ValidateMetaUpdate(&c.ObjectMeta, &old.ObjectMeta)
				return declarativeLast(append(errs, validateClaimStatus(c, old)...))
			},
		},
		Admit: admitAdminAccess(adminCheck{kind: "ResourceClaim",
			requests: func(obj runtime.Object) ([]resourcev1.DeviceRequest, bool) {
				c, ok := obj.(*claim)
				if !ok {
					return nil, false
				}
				return c.Spec.Devices.Requests, true
			},
			validate: func(obj runtime.Object) field.ErrorList { return validate(obj.(*claim)) },
		}),
		Attrs:           strategy.Attrs[*claim](true, nil),
		FieldLabelError: strategy.UnknownFieldLabel,
		Table:           printers.For(Group, "ResourceClaim"),
	}
}

// dropDisabledClaimStatus drops what features off by default in v1.37
// would add to an allocation: nodes operations to skip.
func dropDisabledClaimStatus(c, old *resourcev1.ResourceClaim) {
	if a := old.Status.Allocation; a != nil {
		for _, r := range a.Devices.Results {
			if len(r.SkipNodeOperations) > 0 {
				return
			}
		}
	}
	if a := c.Status.Allocation; a != nil {
		for i := range a.Devices.Results {
			a.Devices.Results[i].SkipNodeOperations = nil
		}
	}
}

// validateClaimStatus: consumers with resource, name and UID, each once,
// only on an allocated claim and never added once it is being deleted; an
// allocation that never changes once made; allocation results naming the
// claim's requests and real devices.
func validateClaimStatus(c, old *resourcev1.ResourceClaim) field.ErrorList {
	st, p := &c.Status, strategy.StatusPath
	names := gatherRequestNames(&c.Spec.Devices)
	consumers := validateSet(p.Child("reservedFor"), st.ReservedFor, resourcev1.ResourceClaimReservedForMaxSize,
		func(p *field.Path, r *resourcev1.ResourceClaimConsumerReference) field.ErrorList {
			var errs field.ErrorList
			if r.Resource == "" {
				errs = append(errs, field.Required(p.Child("resource"), ""))
			}
			if r.Name == "" {
				errs = append(errs, field.Required(p.Child("name"), ""))
			}
			if r.UID == "" {
				errs = append(errs, field.Required(p.Child("uid"), ""))
			}
			return errs
		}, func(r *resourcev1.ResourceClaimConsumerReference) string { return string(r.UID) }, listOpts{true, true})
	// kube-apiserver's declarative checks of the consumers come after those
	// of the allocation (the order of the status fields).
	var errs, consumersCovered field.ErrorList
	for _, e := range consumers {
		if e.CoveredByDeclarative {
			consumersCovered = append(consumersCovered, e)
		} else {
			errs = append(errs, e)
		}
	}
	for i := range st.Devices {
		d := &st.Devices[i]
		dp := p.Child("devices").Index(i)
		errs = append(errs, driverName(dp.Child("driver"), d.Driver)...)
		errs = append(errs, poolName(dp.Child("pool"), d.Pool)...)
		errs = append(errs, strategy.Check(dp.Child("device"), d.Device, validation.IsDNS1123Label)...)
		errs = append(errs, metav1validation.ValidateConditions(d.Conditions, dp.Child("conditions"))...)
	}
	if len(st.ReservedFor) > 0 {
		if st.Allocation == nil {
			errs = append(errs, field.Forbidden(p.Child("reservedFor"), "may not be specified when `allocated` is not set"))
		} else if c.DeletionTimestamp != nil && hasNewConsumers(st.ReservedFor, old.Status.ReservedFor) {
			errs = append(errs, field.Forbidden(p.Child("reservedFor"), "new entries may not be added while `deallocationRequested` or `deletionTimestamp` are set"))
		}
	}
	switch {
	case old.Status.Allocation != nil && st.Allocation != nil:
		if !apiequality.Semantic.DeepEqual(st.Allocation, old.Status.Allocation) {
			errs = append(errs, field.Invalid(p.Child("allocation"), nil, "field is immutable"))
		}
	case st.Allocation != nil:
		errs = append(errs, validateAllocation(p.Child("allocation"), st.Allocation, names)...)
	}
	return append(errs, consumersCovered...)
}

func hasNewConsumers(refs, old []resourcev1.ResourceClaimConsumerReference) bool {
	for _, r := range refs {
		found := false
		for _, o := range old {
			found = found || o == r
		}
		if !found {
			return true
		}
	}
	return false
}

func validateAllocation(p *field.Path, a *resourcev1.AllocationResult, names requestNames) field.ErrorList {
	dp := p.Child("devices")
	errs := validateList(dp.Child("results"), a.Devices.Results, resourcev1.AllocationResultsMaxSize,
		func(p *field.Path, r *resourcev1.DeviceRequestAllocationResult) field.ErrorList {
			errs := validateRequestRefs(p.Child("request"), []string{r.Request}, names)
			for i := range errs {
				errs[i].Field = p.Child("request").String()
			}
			errs = append(errs, coveredDriverName(p.Child("driver"), r.Driver)...)
			errs = append(errs, covered(poolName(p.Child("pool"), r.Pool))...)
			errs = append(errs, strategy.Check(p.Child("device"), r.Device, validation.IsDNS1123Label)...)
			errs = append(errs, validateBindingConditions(p, r.BindingConditions, r.BindingFailureConditions)...)
			for i := range r.Tolerations {
				errs = append(errs, validateToleration(p.Child("tolerations").Index(i), &r.Tolerations[i])...)
			}
			return errs
		}, listOpts{sizeCovered: true})
	errs = append(errs, validateList(dp.Child("config"), a.Devices.Config, 2*resourcev1.DeviceConfigMaxSize,
		func(p *field.Path, c *resourcev1.DeviceAllocationConfiguration) field.ErrorList {
			var errs field.ErrorList
			switch c.Source {
			case "":
				errs = append(errs, field.Required(p.Child("source"), "").MarkCoveredByDeclarative())
			case resourcev1.AllocationConfigSourceClaim, resourcev1.AllocationConfigSourceClass:
			default:
				errs = append(errs, field.NotSupported(p.Child("source"), c.Source, []string{"FromClaim", "FromClass"}).MarkCoveredByDeclarative())
			}
			errs = append(errs, validateRequestRefs(p.Child("requests"), c.Requests, names)...)
			return append(errs, validateOpaque(p, &c.DeviceConfiguration, false)...)
		}, listOpts{sizeCovered: true})...)
	return errs
}
