package admissionregistration

import (
	"strings"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/admissioncel"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

type matchConditionOptions struct {
	// params: a policy with a paramKind may use params.
	params bool
	// stored are the expressions the object already had.
	stored sets.Set[string]
}

// validateMatchConditions: at most 64, each named (a qualified name,
// unique) with a boolean expression that compiles.
func validateMatchConditions(p *field.Path, conds []admissionv1.MatchCondition, o matchConditionOptions) field.ErrorList {
	var errs field.ErrorList
	if len(conds) > 64 {
		errs = append(errs, field.TooMany(p, len(conds), 64))
	}
	var c *celCompiler
	names := sets.New[string]()
	for i, mc := range conds {
		ip := p.Index(i)
		if expr := strings.TrimSpace(mc.Expression); expr == "" {
			errs = append(errs, field.Required(ip.Child("expression"), ""))
		} else {
			if c == nil {
				var err error
				if c, err = newCELCompiler(false); err != nil {
					return append(errs, field.InternalError(ip.Child("expression"), err))
				}
			}
			if _, e := c.compile(ip.Child("expression"), expr, admissioncel.Vars{Params: o.params, Authorizer: true}, o.stored.Has(expr), admissioncel.BoolResult); e != nil {
				errs = append(errs, e)
			}
		}
		if mc.Name == "" {
			errs = append(errs, field.Required(ip.Child("name"), ""))
		} else {
			errs = append(errs, strategy.Check(ip.Child("name"), mc.Name, validation.IsQualifiedName)...)
		}
		if mc.Name != "" {
			if names.Has(mc.Name) {
				errs = append(errs, field.Duplicate(ip.Child("name"), mc.Name))
			}
			names.Insert(mc.Name)
		}
	}
	return errs
}
