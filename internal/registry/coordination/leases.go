package coordination

import (
	coordinationv1 "k8s.io/api/coordination/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/printers"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

func leasesResource() *registry.Resource {
	return &registry.Resource{
		Group: "coordination.k8s.io", Version: "v1", Resource: "leases", Kind: "Lease", ListKind: "LeaseList",
		Singular: "lease", Namespaced: true,
		NoGeneration:          true, // as kube-apiserver: no metadata.generation
		NoUnconditionalUpdate: true, // as kube-apiserver: a PUT must name a resourceVersion
		New:                   func() runtime.Object { return &coordinationv1.Lease{} },
		NewList:               func() runtime.Object { return &coordinationv1.LeaseList{} },
		Strategy: strategy.CreateOnUpdate[*coordinationv1.Lease]{Typed: strategy.Typed[*coordinationv1.Lease]{
			PrepareCreate: func(l *coordinationv1.Lease) { dropLeaderElectionFields(l, nil) },
			PrepareUpdate: dropLeaderElectionFields,
			ValidateNew: func(l *coordinationv1.Lease) field.ErrorList {
				errs := strategy.ValidateGenericMeta(&l.ObjectMeta, true, apivalidation.NameIsDNSSubdomain)
				return append(errs, validateLeaseSpec(&l.Spec)...)
			},
			ValidateChange: func(l, old *coordinationv1.Lease) field.ErrorList {
				errs := strategy.ValidateGenericMetaUpdate(&l.ObjectMeta, &old.ObjectMeta)
				return append(errs, validateLeaseSpec(&l.Spec)...)
			},
		}},
		Attrs: strategy.Attrs[*coordinationv1.Lease](true, nil),
		Table: printers.For("coordination.k8s.io", "Lease"),
	}
}

func validateLeaseSpec(s *coordinationv1.LeaseSpec) field.ErrorList {
	var errs field.ErrorList
	if d := s.LeaseDurationSeconds; d != nil && *d <= 0 {
		errs = append(errs, field.Invalid(strategy.SpecPath.Child("leaseDurationSeconds"), *d, "must be greater than 0"))
	}
	if t := s.LeaseTransitions; t != nil && *t < 0 {
		errs = append(errs, field.Invalid(strategy.SpecPath.Child("leaseTransitions"), *t, "must be greater than or equal to 0"))
	}
	if s.Strategy != nil {
		for _, msg := range validation.IsQualifiedName(string(*s.Strategy)) {
			errs = append(errs, field.Invalid(strategy.SpecPath.Child("strategy"), *s.Strategy, msg))
		}
	}
	if s.PreferredHolder != nil && *s.PreferredHolder != "" && (s.Strategy == nil || *s.Strategy == "") {
		errs = append(errs, field.Forbidden(strategy.SpecPath.Child("preferredHolder"), "may only be specified if `strategy` is defined"))
	}
	return errs
}

// dropLeaderElectionFields drops spec.strategy and spec.preferredHolder
// unless old has them, as kube-apiserver does while its
// CoordinatedLeaderElection feature is off (the default of v1.37).
func dropLeaderElectionFields(l, old *coordinationv1.Lease) {
	if old == nil || old.Spec.Strategy == nil {
		l.Spec.Strategy = nil
	}
	if old == nil || old.Spec.PreferredHolder == nil {
		l.Spec.PreferredHolder = nil
	}
}
