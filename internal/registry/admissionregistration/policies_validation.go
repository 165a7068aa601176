package admissionregistration

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/google/cel-go/cel"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/admissioncel"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

// policyOptions relax an update's checks for what the stored policy
// already has, as kube-apiserver does: unchanged match conditions (and
// paramKind) are not compiled again, and expressions the policy had may
// use the libraries of stored expressions.
type policyOptions struct {
	ignoreMatchConditions bool
	stored                storedExpressions
}

type storedExpressions struct {
	conditions, validations, messages, annotations, applies, patches sets.Set[string]
}

func validatingPolicyUpdateOptions(p, old *admissionv1.ValidatingAdmissionPolicy) policyOptions {
	s := storedExpressions{conditions: sets.New[string](), validations: sets.New[string](), messages: sets.New[string](), annotations: sets.New[string]()}
	for _, mc := range old.Spec.MatchConditions {
		s.conditions.Insert(mc.Expression)
	}
	for _, v := range old.Spec.Validations {
		s.validations.Insert(v.Expression)
		if v.MessageExpression != "" {
			s.messages.Insert(v.MessageExpression)
		}
	}
	for _, a := range old.Spec.AuditAnnotations {
		s.annotations.Insert(a.ValueExpression)
	}
	return policyOptions{stored: s, ignoreMatchConditions: semanticEqual(p.Spec.ParamKind, old.Spec.ParamKind) &&
		semanticEqual(p.Spec.MatchConditions, old.Spec.MatchConditions)}
}

func mutatingPolicyUpdateOptions(p, old *admissionv1.MutatingAdmissionPolicy) policyOptions {
	s := storedExpressions{conditions: sets.New[string](), applies: sets.New[string](), patches: sets.New[string]()}
	for _, mc := range old.Spec.MatchConditions {
		s.conditions.Insert(mc.Expression)
	}
	for _, m := range old.Spec.Mutations {
		if m.ApplyConfiguration != nil {
			s.applies.Insert(m.ApplyConfiguration.Expression)
		}
		if m.JSONPatch != nil {
			s.patches.Insert(m.JSONPatch.Expression)
		}
	}
	return policyOptions{stored: s, ignoreMatchConditions: semanticEqual(p.Spec.ParamKind, old.Spec.ParamKind) &&
		semanticEqual(p.Spec.MatchConditions, old.Spec.MatchConditions)}
}

const (
	maxAuditAnnotations        = 20
	maxAuditAnnotationValueLen = 5 * 1024
)

// policyCommon checks what both kinds of policy have: failurePolicy,
// paramKind, matchConstraints and match conditions.
func policyCommon(p *field.Path, failure *admissionv1.FailurePolicyType, paramKind *admissionv1.ParamKind,
	match *admissionv1.MatchResources, conds []admissionv1.MatchCondition, o policyOptions, mutating bool) field.ErrorList {
	var errs field.ErrorList
	if failure == nil {
		errs = append(errs, field.Required(p.Child("failurePolicy"), ""))
	} else {
		errs = append(errs, notSupported(p.Child("failurePolicy"), *failure, failurePolicies)...)
	}
	if paramKind != nil {
		errs = append(errs, validateParamKind(p.Child("paramKind"), paramKind)...)
	}
	if match == nil {
		errs = append(errs, field.Required(p.Child("matchConstraints"), ""))
	} else {
		errs = append(errs, validateMatchResources(p.Child("matchConstraints"), match)...)
		if len(match.ResourceRules) == 0 {
			errs = append(errs, field.Required(p.Child("matchConstraints", "resourceRules"), ""))
		}
		if mutating {
			errs = append(errs, validateMutatingOperations(p.Child("matchConstraints"), match)...)
		}
	}
	if !o.ignoreMatchConditions {
		errs = append(errs, validateMatchConditions(p.Child("matchConditions"), conds,
			matchConditionOptions{params: paramKind != nil, stored: o.stored.conditions})...)
	}
	return errs
}

func validateValidatingPolicySpec(pol *admissionv1.ValidatingAdmissionPolicy, o policyOptions) field.ErrorList {
	s, p := &pol.Spec, strategy.SpecPath
	errs := policyCommon(p, s.FailurePolicy, s.ParamKind, s.MatchConstraints, s.MatchConditions, o, false)
	c, err := newCELCompiler(len(s.Variables) > 0)
	if err != nil {
		return append(errs, field.InternalError(p, err))
	}
	params := s.ParamKind != nil
	for i, v := range s.Variables {
		errs = append(errs, validateVariable(c, p.Child("variables").Index(i), &v, params, o.stored.validations.Has(v.Expression))...)
	}
	if len(s.Validations) == 0 && len(s.AuditAnnotations) == 0 {
		const msg = "validations or auditAnnotations must contain at least one item"
		return append(errs, field.Required(p.Child("validations"), msg), field.Required(p.Child("auditAnnotations"), msg))
	}
	for i, v := range s.Validations {
		errs = append(errs, validateValidation(c, p.Child("validations").Index(i), &v, params, o)...)
	}
	if len(s.AuditAnnotations) > maxAuditAnnotations {
		errs = append(errs, field.Invalid(p.Child("auditAnnotations"), s.AuditAnnotations, fmt.Sprintf("must not have more than %d auditAnnotations", maxAuditAnnotations)))
	}
	keys := sets.New[string]()
	for i, a := range s.AuditAnnotations {
		ap := p.Child("auditAnnotations").Index(i)
		errs = append(errs, validateAuditAnnotation(c, ap, pol.Name, &a, params, o.stored.annotations.Has(a.ValueExpression))...)
		if keys.Has(a.Key) {
			errs = append(errs, field.Duplicate(ap.Child("key"), a.Key))
		}
		keys.Insert(a.Key)
	}
	return errs
}

var (
	celIdentifier = regexp.MustCompile("^[_a-zA-Z][_a-zA-Z0-9]*$")
	celReserved   = sets.New("true", "false", "null", "in", "as", "break", "const", "continue", "else",
		"for", "function", "if", "import", "let", "loop", "package", "namespace", "return", "var", "void", "while")
	newlines = regexp.MustCompile(`[\n\r]+`)
)

func validateVariable(c *celCompiler, p *field.Path, v *admissionv1.Variable, params, stored bool) field.ErrorList {
	var errs field.ErrorList
	if trimSpace(v.Name) == "" {
		errs = append(errs, field.Required(p.Child("name"), "name is not specified"))
	} else if !celIdentifier.MatchString(v.Name) || celReserved.Has(v.Name) {
		errs = append(errs, field.Invalid(p.Child("name"), v.Name, "must be a valid CEL identifier"))
	}
	if trimSpace(v.Expression) == "" {
		return append(errs, field.Required(p.Child("expression"), "expression is not specified"))
	}
	t, e := c.compile(p.Child("expression"), v.Expression, admissioncel.Vars{Params: params, Authorizer: true}, stored, admissioncel.AnyResult)
	c.addVariable(v.Name, t)
	if e != nil {
		errs = append(errs, e)
	}
	return errs
}

func validateValidation(c *celCompiler, p *field.Path, v *admissionv1.Validation, params bool, o policyOptions) field.ErrorList {
	var errs field.ErrorList
	if trimSpace(v.Expression) == "" {
		errs = append(errs, field.Required(p.Child("expression"), "expression is not specified"))
	} else if _, e := c.compile(p.Child("expression"), v.Expression, admissioncel.Vars{Params: params, Authorizer: true},
		o.stored.validations.Has(v.Expression), admissioncel.BoolResult); e != nil {
		errs = append(errs, e)
	}
	switch msgExpr := trimSpace(v.MessageExpression); {
	case v.MessageExpression != "" && msgExpr == "":
		errs = append(errs, field.Invalid(p.Child("messageExpression"), v.MessageExpression, "must be non-empty if specified"))
	case msgExpr != "":
		if _, e := c.compile(p.Child("messageExpression"), v.MessageExpression, admissioncel.Vars{Params: params},
			o.stored.messages.Has(v.MessageExpression), admissioncel.StringResult); e != nil {
			errs = append(errs, e)
		}
	}
	msg := trimSpace(v.Message)
	switch {
	case v.Message != "" && msg == "":
		errs = append(errs, field.Invalid(p.Child("message"), v.Message, "must be non-empty if specified"))
	case newlines.MatchString(msg):
		errs = append(errs, field.Invalid(p.Child("message"), v.Message, "must not contain line breaks"))
	}
	if v.Reason != nil {
		errs = append(errs, notSupported(p.Child("reason"), *v.Reason, validationReasons)...)
	}
	return errs
}

func validateAuditAnnotation(c *celCompiler, p *field.Path, policy string, a *admissionv1.AuditAnnotation, params, stored bool) field.ErrorList {
	var errs field.ErrorList
	if policy != "" {
		errs = append(errs, strategy.Check(p.Child("key"), policy+"/"+a.Key, validation.IsQualifiedName)...)
	} else {
		errs = append(errs, field.Invalid(p.Child("key"), a.Key, "requires metadata.name be non-empty"))
	}
	switch expr := trimSpace(a.ValueExpression); {
	case expr == "":
		errs = append(errs, field.Required(p.Child("valueExpression"), "valueExpression is not specified"))
	case len(expr) > maxAuditAnnotationValueLen:
		errs = append(errs, field.Required(p.Child("valueExpression"), fmt.Sprintf("must not exceed %d bytes in length", maxAuditAnnotationValueLen)))
	default:
		if _, e := c.compile(p.Child("valueExpression"), expr, admissioncel.Vars{Params: params, Authorizer: true}, stored, admissioncel.AnnotationResult); e != nil {
			e.BadValue = a.ValueExpression
			errs = append(errs, e)
		}
	}
	return errs
}

func validateMutatingPolicySpec(pol *admissionv1.MutatingAdmissionPolicy, o policyOptions) field.ErrorList {
	s, p := &pol.Spec, strategy.SpecPath
	c, err := newCELCompiler(true)
	if err != nil {
		return field.ErrorList{field.InternalError(p, err)}
	}
	errs := policyCommon(p, s.FailurePolicy, s.ParamKind, s.MatchConstraints, s.MatchConditions, o, true)
	params := s.ParamKind != nil
	for i, v := range s.Variables {
		errs = append(errs, validateVariable(c, p.Child("variables").Index(i), &v, params, false)...)
	}
	if len(s.Mutations) == 0 {
		errs = append(errs, field.Required(p.Child("mutations"), "mutations must contain at least one item"))
	}
	for i, m := range s.Mutations {
		errs = append(errs, validateMutation(c, p.Child("mutations").Index(i), &m, params, o)...)
	}
	if s.ReinvocationPolicy == "" {
		errs = append(errs, field.Required(p.Child("reinvocationPolicy"), ""))
	} else {
		errs = append(errs, notSupported(p.Child("reinvocationPolicy"), s.ReinvocationPolicy, reinvocation)...)
	}
	return errs
}

func validateMutation(c *celCompiler, p *field.Path, m *admissionv1.Mutation, params bool, o policyOptions) field.ErrorList {
	vars := admissioncel.Vars{Params: params, Authorizer: true, PatchTypes: true}
	compile := func(p *field.Path, expr string, stored bool, want []*cel.Type) field.ErrorList {
		expr = trimSpace(expr)
		if expr == "" {
			return field.ErrorList{field.Required(p.Child("expression"), "")}
		}
		if _, e := c.compile(p.Child("expression"), expr, vars, stored, want); e != nil {
			return field.ErrorList{e}
		}
		return nil
	}
	switch m.PatchType {
	case "":
		return field.ErrorList{field.Required(p.Child("patchType"), "")}
	case admissionv1.PatchTypeJSONPatch:
		var errs field.ErrorList
		if m.JSONPatch == nil {
			errs = append(errs, field.Required(p.Child("jsonPatch"), "must be specified when patchType is JSONPatch"))
		} else {
			// kube-apiserver looks a stored JSON patch up among the apply
			// configurations.
			errs = append(errs, compile(p.Child("jsonPatch"), m.JSONPatch.Expression, o.stored.applies.Has(m.JSONPatch.Expression), admissioncel.JSONPatchResult)...)
		}
		if m.ApplyConfiguration != nil {
			errs = append(errs, field.Invalid(p.Child("applyConfiguration"), "{applyConfiguration}", "must not be specified when patchType is JSONPatch"))
		}
		return errs
	case admissionv1.PatchTypeApplyConfiguration:
		var errs field.ErrorList
		if m.ApplyConfiguration == nil {
			errs = append(errs, field.Required(p.Child("applyConfiguration"), "must be specified when patchType is ApplyConfiguration"))
		} else {
			errs = append(errs, compile(p.Child("applyConfiguration"), m.ApplyConfiguration.Expression, o.stored.applies.Has(m.ApplyConfiguration.Expression), admissioncel.ApplyResult)...)
		}
		if m.JSONPatch != nil {
			errs = append(errs, field.Invalid(p.Child("jsonPatch"), "{jsonPatch}", "must not be specified when patchType is ApplyConfiguration"))
		}
		return errs
	}
	return field.ErrorList{field.NotSupported(p.Child("patchType"), m.PatchType, patchTypes)}
}

func trimSpace(s string) string { return strings.TrimSpace(s) }
