package flowcontrol

import (
	"fmt"
	"math"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/printers"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

// Defaults of a priority level.
const (
	defaultHandSize                 = 8
	defaultQueues                   = 64
	defaultQueueLengthLimit         = 50
	defaultNominalConcurrencyShares = 30
	// maxQueues bounds queuing.queues; maxHashBits bounds the entropy
	// shuffle sharding needs (queues and handSize).
	maxQueues   = 10 * 1000 * 1000
	maxHashBits = 60
)

func priorityLevelsResource() *registry.Resource {
	return &registry.Resource{
		Group: "flowcontrol.apiserver.k8s.io", Version: "v1", Resource: "prioritylevelconfigurations",
		Kind: "PriorityLevelConfiguration", ListKind: "PriorityLevelConfigurationList",
		Singular: "prioritylevelconfiguration",
		New:      func() runtime.Object { return &flowcontrolv1.PriorityLevelConfiguration{} },
		NewList:  func() runtime.Object { return &flowcontrolv1.PriorityLevelConfigurationList{} },
		Strategy: strategy.Typed[*flowcontrolv1.PriorityLevelConfiguration]{
			PrepareCreate: func(pl *flowcontrolv1.PriorityLevelConfiguration) {
				pl.Status = flowcontrolv1.PriorityLevelConfigurationStatus{}
			},
			PrepareUpdate: func(pl, old *flowcontrolv1.PriorityLevelConfiguration) { pl.Status = old.Status },
			Defaults:      defaultPriorityLevel,
			ValidateNew: func(pl *flowcontrolv1.PriorityLevelConfiguration) field.ErrorList {
				errs := strategy.ValidateMeta(&pl.ObjectMeta, false, apivalidation.NameIsDNSSubdomain)
				return append(errs, validatePriorityLevelBody(pl)...)
			},
			ValidateChange: func(pl, old *flowcontrolv1.PriorityLevelConfiguration) field.ErrorList {
				errs := strategy.ValidateMetaUpdate(&pl.ObjectMeta, &old.ObjectMeta)
				return append(errs, validatePriorityLevelBody(pl)...)
			},
		},
		Status: strategy.TypedStatus[*flowcontrolv1.PriorityLevelConfiguration]{
			PrepareUpdate: func(pl, old *flowcontrolv1.PriorityLevelConfiguration) {
				pl.Spec = old.Spec
				strategy.ResetMetaForStatus(&pl.ObjectMeta, &old.ObjectMeta)
			},
			ValidateChange: func(pl, old *flowcontrolv1.PriorityLevelConfiguration) field.ErrorList {
				errs := strategy.ValidateMetaUpdate(&pl.ObjectMeta, &old.ObjectMeta)
				return append(errs, validatePriorityLevelStatus(&pl.Status)...)
			},
		},
		Bootstrap: bootstrapPriorityLevels,
		Attrs:     strategy.Attrs[*flowcontrolv1.PriorityLevelConfiguration](true, nil),
		Table:     printers.For("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration"),
	}
}

func defaultPriorityLevel(pl *flowcontrolv1.PriorityLevelConfiguration) {
	if e := pl.Spec.Exempt; e != nil {
		if e.NominalConcurrencyShares == nil {
			e.NominalConcurrencyShares = new(int32(0))
		}
		if e.LendablePercent == nil {
			e.LendablePercent = new(int32(0))
		}
	}
	l := pl.Spec.Limited
	if l == nil {
		return
	}
	if l.NominalConcurrencyShares == nil {
		l.NominalConcurrencyShares = new(int32(defaultNominalConcurrencyShares))
	}
	if l.LendablePercent == nil {
		l.LendablePercent = new(int32(0))
	}
	if q := l.LimitResponse.Queuing; q != nil {
		if q.HandSize == 0 {
			q.HandSize = defaultHandSize
		}
		if q.Queues == 0 {
			q.Queues = defaultQueues
		}
		if q.QueueLengthLimit == 0 {
			q.QueueLengthLimit = defaultQueueLengthLimit
		}
	}
}

// validatePriorityLevelBody checks all but metadata. The errors
// kube-apiserver v1.37 reports from its declarative rules (a config that
// must or must not be there, without detail) come after the others.
func validatePriorityLevelBody(pl *flowcontrolv1.PriorityLevelConfiguration) field.ErrorList {
	p := strategy.SpecPath
	errs, late := validatePriorityLevelSpec(&pl.Spec, pl.Name, p)
	errs = append(errs, late...)
	if mand, ok := mandatoryPriorityLevel(pl.Name); ok {
		got := pl.Spec
		msg := fmt.Sprintf("spec of '%s' must equal the fixed value", pl.Name)
		if pl.Name == flowcontrolv1.PriorityLevelConfigurationNameExempt {
			// The exempt level's exempt settings may be changed.
			got.Exempt, mand.Exempt = nil, nil
			msg = fmt.Sprintf("spec of '%s' except the 'spec.exempt' field must equal the fixed value", pl.Name)
		}
		if !apiequality.Semantic.DeepEqual(got, mand) {
			errs = append(errs, field.Invalid(p, strategy.GoNamed{V: internalSpec(pl.Spec)}, msg))
		}
	}
	return append(errs, validatePriorityLevelStatus(&pl.Status)...)
}

func validatePriorityLevelSpec(spec *flowcontrolv1.PriorityLevelConfigurationSpec, name string, p *field.Path) (errs, late field.ErrorList) {
	exempt := flowcontrolv1.PriorityLevelEnablementExempt
	limited := flowcontrolv1.PriorityLevelEnablementLimited
	if spec.Type != "" && (name == flowcontrolv1.PriorityLevelConfigurationNameExempt) != (spec.Type == exempt) {
		errs = append(errs, field.Invalid(p.Child("type"), spec.Type, "must be 'Exempt' if and only if `name` is 'exempt'"))
	}
	switch spec.Type {
	case exempt:
		if spec.Limited != nil {
			late = append(late, field.Forbidden(p.Child("limited"), ""))
		}
		if e := spec.Exempt; e != nil {
			ep := p.Child("exempt")
			if e.NominalConcurrencyShares != nil && *e.NominalConcurrencyShares < 0 {
				errs = append(errs, field.Invalid(ep.Child("nominalConcurrencyShares"), *e.NominalConcurrencyShares, "must be a non-negative integer"))
			}
			errs = append(errs, validateLendable(e.LendablePercent, ep.Child("lendablePercent"))...)
		}
	case limited:
		if spec.Exempt != nil {
			late = append(late, field.Forbidden(p.Child("exempt"), ""))
		}
		if spec.Limited == nil {
			late = append(late, field.Required(p.Child("limited"), ""))
		} else {
			e, l := validateLimited(spec.Limited, p.Child("limited"))
			errs, late = append(errs, e...), append(late, l...)
		}
	case "":
		late = append(late, field.Required(p.Child("type"), ""))
	default:
		// An unknown type is no member's: kube-apiserver's declarative
		// union check forbids whichever is set.
		errs = append(errs, field.NotSupported(p.Child("type"), spec.Type, []string{string(exempt), string(limited)}))
		if spec.Limited != nil {
			late = append(late, field.Forbidden(p.Child("limited"), ""))
		}
		if spec.Exempt != nil {
			late = append(late, field.Forbidden(p.Child("exempt"), ""))
		}
	}
	return errs, late
}

func validateLendable(v *int32, p *field.Path) field.ErrorList {
	if v != nil && (*v < 0 || *v > 100) {
		return field.ErrorList{field.Invalid(p, *v, "must be between 0 and 100, inclusive")}
	}
	return nil
}

func validateLimited(l *flowcontrolv1.LimitedPriorityLevelConfiguration, p *field.Path) (errs, late field.ErrorList) {
	if n := l.NominalConcurrencyShares; n != nil && *n < 0 {
		errs = append(errs, field.Invalid(p.Child("nominalConcurrencyShares"), *n, "must be a non-negative integer"))
	}
	rp := p.Child("limitResponse")
	switch l.LimitResponse.Type {
	case flowcontrolv1.LimitResponseTypeReject:
		if l.LimitResponse.Queuing != nil {
			late = append(late, field.Forbidden(rp.Child("queuing"), ""))
		}
	case flowcontrolv1.LimitResponseTypeQueue:
		if q := l.LimitResponse.Queuing; q == nil {
			late = append(late, field.Required(rp.Child("queuing"), ""))
		} else {
			errs = append(errs, validateQueuing(q, rp.Child("queuing"))...)
		}
	default:
		errs = append(errs, field.NotSupported(rp.Child("type"), l.LimitResponse.Type, []string{"Queue", "Reject"}))
		if l.LimitResponse.Queuing != nil {
			late = append(late, field.Forbidden(rp.Child("queuing"), ""))
		}
	}
	errs = append(errs, validateLendable(l.LendablePercent, p.Child("lendablePercent"))...)
	if b := l.BorrowingLimitPercent; b != nil && *b < 0 {
		errs = append(errs, field.Invalid(p.Child("borrowingLimitPercent"), *b, "if specified, must be a non-negative integer"))
	}
	return errs, late
}

func validateQueuing(q *flowcontrolv1.QueuingConfiguration, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if q.QueueLengthLimit <= 0 {
		errs = append(errs, field.Invalid(p.Child("queueLengthLimit"), q.QueueLengthLimit, "must be positive"))
	}
	if q.Queues <= 0 {
		errs = append(errs, field.Invalid(p.Child("queues"), q.Queues, "must be positive"))
	} else if q.Queues > maxQueues {
		errs = append(errs, field.Invalid(p.Child("queues"), q.Queues, fmt.Sprintf("must not be greater than %d", maxQueues)))
	}
	hp := p.Child("handSize")
	switch {
	case q.HandSize <= 0:
		errs = append(errs, field.Invalid(hp, q.HandSize, "must be positive"))
	case q.HandSize > q.Queues:
		errs = append(errs, field.Invalid(hp, q.HandSize, fmt.Sprintf("should not be greater than queues (%d)", q.Queues)))
	case requiredEntropyBits(int(q.Queues), int(q.HandSize)) > maxHashBits:
		errs = append(errs, field.Invalid(hp, q.HandSize, fmt.Sprintf(
			"required entropy bits of deckSize %d and handSize %d should not be greater than %d", q.Queues, q.HandSize, maxHashBits)))
	}
	return errs
}

// requiredEntropyBits is how many bits of hash shuffle sharding a deck of
// deckSize cards dealt in hands of handSize needs: ceil(log2(deckSize) *
// handSize).
func requiredEntropyBits(deckSize, handSize int) int {
	return int(math.Ceil(math.Log2(float64(deckSize)) * float64(handSize)))
}

func validatePriorityLevelStatus(st *flowcontrolv1.PriorityLevelConfigurationStatus) field.ErrorList {
	var errs, late field.ErrorList
	seen := sets.New[flowcontrolv1.PriorityLevelConfigurationConditionType]()
	p := strategy.StatusPath.Child("conditions")
	for i, c := range st.Conditions {
		if seen.Has(c.Type) {
			errs = append(errs, field.Duplicate(p.Index(i).Child("type"), c.Type))
		}
		seen.Insert(c.Type)
		if c.Type == "" {
			// Reported by kube-apiserver v1.37's declarative rules: last,
			// without detail.
			late = append(late, field.Required(p.Index(i).Child("type"), ""))
		}
	}
	return append(errs, late...)
}

// The shapes of kube-apiserver's internal priority level spec, whose Go
// field names its messages show ({"Type":"Limited","Limited":{…}}).
type (
	internalPLSpec struct {
		Type    flowcontrolv1.PriorityLevelEnablement
		Limited *internalLimited
		Exempt  *flowcontrolv1.ExemptPriorityLevelConfiguration
	}
	internalLimited struct {
		NominalConcurrencyShares int32
		LimitResponse            flowcontrolv1.LimitResponse
		LendablePercent          *int32
		BorrowingLimitPercent    *int32
	}
)

func internalSpec(s flowcontrolv1.PriorityLevelConfigurationSpec) internalPLSpec {
	out := internalPLSpec{Type: s.Type, Exempt: s.Exempt}
	if l := s.Limited; l != nil {
		out.Limited = &internalLimited{LimitResponse: l.LimitResponse, LendablePercent: l.LendablePercent, BorrowingLimitPercent: l.BorrowingLimitPercent}
		if l.NominalConcurrencyShares != nil {
			out.Limited.NominalConcurrencyShares = *l.NominalConcurrencyShares
		}
	}
	return out
}
